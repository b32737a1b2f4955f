package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// This file holds what the adapter checks inside the chain so that nothing
// mcp-go does after the tool middleware can fail with a raw value in its
// message: mcp-go encodes the result (its encoder's error quotes the value:
// the in-process client receives it, HTTP drops the connection, SSE and
// stdio never answer) and, with server.WithOutputSchemaValidation, validates
// the structured content against the tool's output schema (its error text
// quotes the offending values and becomes the client's isError text). A
// result that would fail either is turned into a raw failure inside the
// chain, so interceptors see it, the audit row keeps the cause and the
// client gets the generic message.

// errNoStructuredContent is the cause of a successful result of a tool with
// an output schema that carries no structured content.
var errNoStructuredContent = errors.New("the tool has an output schema but returned no structured content")

// checkEncodable returns why mcp-go could not encode r, or nil. A panic of
// a MarshalJSON method is returned as a [*errs.PanicError] (scrubbed like
// any panic, its value and stack kept for diagnostics).
func checkEncodable(r *mcp.CallToolResult) error {
	if plainResult(r) {
		return nil
	}
	return marshals(r)
}

func marshals(v any) error {
	if _, err := adapter.Encode(v); err != nil {
		return fmt.Errorf("mcpgo: encode the tool result: %w", err)
	}
	return nil
}

// plainDepth bounds the walk of plainValue; deeper values (and cycles) are
// left to the encoder.
const plainDepth = 32

// plainResult reports whether r certainly encodes, without encoding it: the
// common results (text content, structured content and _meta made of JSON
// values) are checked by a walk that allocates nothing. Anything else is
// encoded once to find out.
func plainResult(r *mcp.CallToolResult) bool {
	if r.Meta != nil && !plainMeta(r.Meta) {
		return false
	}
	if len(r.InputRequests) > 0 {
		return false
	}
	if len(r.RawStructuredContent) > 0 && !json.Valid(r.RawStructuredContent) {
		return false
	}
	if r.StructuredContent != nil && !plainValue(r.StructuredContent, 0) {
		return false
	}
	for _, c := range r.Content {
		tc, ok := c.(mcp.TextContent)
		if !ok || !plainAnnotated(tc.Annotated) || (tc.Meta != nil && !plainMeta(tc.Meta)) {
			return false
		}
	}
	return true
}

func plainAnnotated(a mcp.Annotated) bool {
	return a.Annotations == nil || a.Annotations.Priority == nil || finite(*a.Annotations.Priority)
}

func plainMeta(m *mcp.Meta) bool {
	if !plainValue(m.ProgressToken, 0) {
		return false
	}
	for _, v := range m.AdditionalFields {
		if !plainValue(v, 1) {
			return false
		}
	}
	return true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// plainValue reports whether v is made only of values that always encode.
func plainValue(v any, depth int) bool {
	switch v := v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, []string, map[string]string:
		return true
	case float64:
		return finite(v)
	case float32:
		return finite(float64(v))
	case json.RawMessage:
		return json.Valid(v)
	case map[string]any:
		if depth >= plainDepth {
			return false
		}
		for _, e := range v {
			if !plainValue(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		if depth >= plainDepth {
			return false
		}
		for _, e := range v {
			if !plainValue(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// validateStructured validates structured content against a compiled output
// schema as mcp-go does (through its JSON encoding, so struct tags and
// MarshalJSON methods count). The error quotes the offending values: it is
// a raw cause, for the server only.
func validateStructured(sch *jsonschema.Schema, structured any) error {
	var raw []byte
	if rm, ok := structured.(json.RawMessage); ok {
		raw = rm
	} else {
		b, err := adapter.Encode(structured)
		if err != nil {
			return fmt.Errorf("mcpgo: encode the structured content: %w", err)
		}
		raw = b
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return errNoStructuredContent
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("mcpgo: decode the structured content: %w", err)
	}
	if err := sch.Validate(value); err != nil {
		return fmt.Errorf("output schema validation failed: %w", err)
	}
	return nil
}

// outputValidatorField is the index of MCPServer's unexported
// outputValidator field (set by server.WithOutputSchemaValidation), or nil
// when this mcp-go has no such pointer field; it is computed once and never
// changed. mcp-go v1.2 exposes no accessor for it.
var outputValidatorField = func() []int {
	f, ok := reflect.TypeFor[server.MCPServer]().FieldByName("outputValidator")
	if !ok || f.Type.Kind() != reflect.Pointer {
		return nil
	}
	return f.Index
}()

// validatesOutput reports whether s validates tool outputs after the tool
// middleware. When the field cannot be found (another mcp-go version) it
// assumes s does: the check inside the chain is then only stricter.
func validatesOutput(s *server.MCPServer) bool {
	if s == nil {
		return false
	}
	if outputValidatorField == nil {
		return true
	}
	return !reflect.ValueOf(s).Elem().FieldByIndex(outputValidatorField).IsNil()
}

// lookupTool finds the tool mcp-go runs for name, as handleToolCall does:
// the session's own tools first, then the server's.
func lookupTool(ctx context.Context, s *server.MCPServer, name string) (mcp.Tool, bool) {
	if st, ok := server.ClientSessionFromContext(ctx).(server.SessionWithTools); ok {
		if tools := st.GetSessionTools(); tools != nil {
			if t, ok := tools[name]; ok {
				return t.Tool, true
			}
		}
	}
	if t := s.GetTool(name); t != nil {
		return t.Tool, true
	}
	return mcp.Tool{}, false
}

// outputSchemaJSON is the output schema mcp-go validates with: the raw one
// when set, else the structured one unless it is empty.
func outputSchemaJSON(tool *mcp.Tool) []byte {
	if len(tool.RawOutputSchema) > 0 {
		return tool.RawOutputSchema
	}
	if tool.OutputSchema.Type == "" && len(tool.OutputSchema.Properties) == 0 && len(tool.OutputSchema.Required) == 0 {
		return nil
	}
	b, err := json.Marshal(tool.OutputSchema)
	if err != nil {
		return nil
	}
	return b
}

// schemaCache holds compiled output schemas by tool name. A schema that
// does not compile is cached as nil, and mcp-go skips its validation too.
type schemaCache struct {
	m sync.Map // tool name -> *cachedSchema
}

type cachedSchema struct {
	raw []byte
	sch *jsonschema.Schema
}

func (c *schemaCache) get(name string, raw []byte) *jsonschema.Schema {
	if v, ok := c.m.Load(name); ok {
		if e := v.(*cachedSchema); bytes.Equal(e.raw, raw) {
			return e.sch
		}
	}
	sch, _ := compileOutputSchema(name, raw)
	c.m.Store(name, &cachedSchema{raw: bytes.Clone(raw), sch: sch})
	return sch
}

func compileOutputSchema(name string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	// mcp-go's URL (server/input_validation.go compileSchema, which its
	// output validator uses too): a tool name that is no valid URL path
	// segment then fails here exactly when it fails there.
	url := "mem:///mcp-go/tools/" + name + "/input-schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// checkNativeOutput validates a native tool's successful result against the
// tool's output schema when the server validates outputs, as mcp-go would
// after the middleware: its StructuredContent (what mcp-go checks) and its
// RawStructuredContent (what mcp-go sends when set).
func (e *engine) checkNativeOutput(ctx context.Context, name string, r *mcp.CallToolResult) error {
	if r.IsError || (r.StructuredContent == nil && len(r.RawStructuredContent) == 0) {
		return nil
	}
	s := server.ServerFromContext(ctx)
	if !validatesOutput(s) {
		return nil
	}
	tool, ok := lookupTool(ctx, s, name)
	if !ok {
		return nil
	}
	raw := outputSchemaJSON(&tool)
	if raw == nil {
		return nil
	}
	sch := e.schemas.get(name, raw)
	if sch == nil {
		return nil
	}
	if r.StructuredContent != nil {
		if err := validateStructured(sch, r.StructuredContent); err != nil {
			return err
		}
	}
	if len(r.RawStructuredContent) > 0 {
		return validateStructured(sch, r.RawStructuredContent)
	}
	return nil
}

// checkAnswer is what the adapter checks of any answer it gives mcp-go:
// that mcp-go can encode it and, for a success on a server that validates
// outputs, that it passes the tool's output schema.
func (e *engine) checkAnswer(ctx context.Context, name string, r *mcp.CallToolResult) error {
	if err := checkEncodable(r); err != nil {
		return err
	}
	return e.checkNativeOutput(ctx, name, r)
}
