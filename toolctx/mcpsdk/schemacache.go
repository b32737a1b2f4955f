package mcpsdk

import (
	"encoding/json"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCachedSchemas bounds the compiled input schemas an adapter keeps; when
// it is full the cache starts over (a server with more typed tools than
// this that all fail validation compiles again, as it did without a cache).
const maxCachedSchemas = 512

// schemaKey identifies a tool's input schema as the tool table holds it:
// the *mcp.Tool the table returned (a tool registered again, typed tools
// always, gets a new one) and the schema's own identity: its pointer for a
// *jsonschema.Schema, else its JSON. A tool whose schema changed is never
// served the old compilation.
type schemaKey struct {
	tool *mcp.Tool
	ptr  *jsonschema.Schema
	raw  string
}

// schemaCache holds compiled input schemas, for the adapter's check of
// whether a typed tool's failure is the SDK's input validation (see
// origin.go): without it, every failed typed call compiled its tool's
// schema again.
type schemaCache struct {
	mu sync.Mutex
	m  map[schemaKey]*jsonschema.Resolved
}

// keyOf returns tool's key, or false when its schema cannot be keyed (it
// does not encode: it does not compile either).
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

// inputSchema returns tool's compiled input schema, from the cache when it
// was compiled before (c may be nil: no cache).
func (c *schemaCache) inputSchema(tool *mcp.Tool) (*jsonschema.Resolved, error) {
	if c == nil {
		return compileSchema(tool.InputSchema)
	}
	key, ok := keyOf(tool)
	if !ok {
		return compileSchema(tool.InputSchema)
	}
	c.mu.Lock()
	in, hit := c.m[key]
	c.mu.Unlock()
	if hit {
		return in, nil
	}
	in, err := compileSchema(tool.InputSchema)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = make(map[schemaKey]*jsonschema.Resolved)
	}
	c.m[key] = in
	c.mu.Unlock()
	return in, nil
}
