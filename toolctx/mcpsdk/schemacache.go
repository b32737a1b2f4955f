package mcpsdk

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// schemaKey names a tool's input schema as the tool table holds it: the
// *mcp.Tool the table returned (a tool registered again gets a new one)
// and, for a *jsonschema.Schema, its pointer; a schema of another type is
// told by its JSON (adapter.SchemaCache), so that a changed schema is
// never served the old compilation.
type schemaKey struct {
	tool *mcp.Tool
	ptr  *jsonschema.Schema
}

// schemaCache holds the compiled input schemas of origin.go's check.
type schemaCache = adapter.SchemaCache[schemaKey, *jsonschema.Resolved]

// inputSchema returns tool's compiled input schema from c (nil: no cache).
func inputSchema(c *schemaCache, tool *mcp.Tool) (*jsonschema.Resolved, error) {
	compile := func() (*jsonschema.Resolved, error) { return compileSchema(tool.InputSchema) }
	if c == nil {
		return compile()
	}
	key := schemaKey{tool: tool}
	var raw []byte
	switch s := tool.InputSchema.(type) {
	case *jsonschema.Schema:
		key.ptr = s
	case json.RawMessage:
		raw = s
	default:
		b, err := json.Marshal(s)
		if err != nil {
			return compile() // it does not compile either
		}
		raw = b
	}
	return c.Get(key, raw, compile)
}
