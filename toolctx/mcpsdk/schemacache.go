package mcpsdk

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// schemaKey is a tool's input schema as the tool table holds it: the
// *mcp.Tool the table returned (a tool registered again gets a new one)
// and the schema's pointer, or its JSON, so that a changed schema is never
// served the old compilation.
type schemaKey struct {
	tool *mcp.Tool
	ptr  *jsonschema.Schema
	raw  string
}

// schemaCache holds the compiled input schemas of origin.go's check.
type schemaCache struct {
	memo adapter.Memo[schemaKey, *jsonschema.Resolved]
}

// keyOf returns tool's key, or false when its schema does not encode (it
// does not compile either).
func keyOf(tool *mcp.Tool) (schemaKey, bool) {
	switch s := tool.InputSchema.(type) {
	case *jsonschema.Schema:
		return schemaKey{tool: tool, ptr: s}, true
	case json.RawMessage:
		return schemaKey{tool: tool, raw: string(s)}, true
	}
	b, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return schemaKey{}, false
	}
	return schemaKey{tool: tool, raw: string(b)}, true
}

// inputSchema returns tool's compiled input schema (c may be nil: no cache).
func (c *schemaCache) inputSchema(tool *mcp.Tool) (*jsonschema.Resolved, error) {
	compile := func() (*jsonschema.Resolved, error) { return compileSchema(tool.InputSchema) }
	if c == nil {
		return compile()
	}
	key, ok := keyOf(tool)
	if !ok {
		return compile()
	}
	return c.memo.Get(key, compile)
}
