package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// What mcp-go does after the tool middleware (encode the result, validate
// it against the output schema) quotes values in its errors, so the adapter
// checks it inside the chain (docs/adapters/mcpgo.md, "Encoding and output
// schemas inside the chain").

// checkEncodable returns why mcp-go could not encode r, or nil. A panic of
// a MarshalJSON method is returned as a [*errs.PanicError].
func checkEncodable(r *mcp.CallToolResult) error {
	if err := checkContent(r.Content); err != nil {
		return fmt.Errorf("mcpgo: the tool result cannot be read: %w", err)
	}
	if plainResult(r) {
		return nil
	}
	if _, err := adapter.Encode(r); err != nil {
		return fmt.Errorf("mcpgo: encode the tool result: %w", err)
	}
	return nil
}

// checkContent returns why the content blocks cs of a tool result are not
// what the protocol's schema allows (ContentBlock, schema/2025-11-25), or
// nil. mcp-go sends a block as it is set, and a client that checks the
// schema (the TypeScript SDK's does) refuses the whole result; mcp-go's and
// go-sdk's own clients refuse a nil block or a type they do not know. So:
// a nil block; a type field that is not its Go type's kind
// (mcp.TextContent{Text: "x"} has none); a resource link without its uri;
// an embedded resource without its contents, or whose contents
// have no uri; and sampling content (tool_use, tool_result), which a tool
// result cannot carry. A block of the tool's own type (one that embeds an
// mcp-go block) is left to encoding.
func checkContent(cs []mcp.Content) error {
	for i, c := range cs {
		if err := checkBlock(c); err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
	}
	return nil
}

func checkBlock(c mcp.Content) error {
	// Value and pointer blocks alike, without boxing a block's value in an
	// interface (an allocation on every call).
	switch b := c.(type) {
	case nil:
		return errNilBlock
	case mcp.TextContent:
		return checkType("mcp.TextContent", b.Type, mcp.ContentTypeText)
	case *mcp.TextContent:
		if b == nil {
			return errNilBlock
		}
		return checkType("mcp.TextContent", b.Type, mcp.ContentTypeText)
	case mcp.ImageContent:
		return checkType("mcp.ImageContent", b.Type, mcp.ContentTypeImage)
	case *mcp.ImageContent:
		if b == nil {
			return errNilBlock
		}
		return checkType("mcp.ImageContent", b.Type, mcp.ContentTypeImage)
	case mcp.AudioContent:
		return checkType("mcp.AudioContent", b.Type, mcp.ContentTypeAudio)
	case *mcp.AudioContent:
		if b == nil {
			return errNilBlock
		}
		return checkType("mcp.AudioContent", b.Type, mcp.ContentTypeAudio)
	case mcp.ResourceLink:
		return checkLink(&b)
	case *mcp.ResourceLink:
		if b == nil {
			return errNilBlock
		}
		return checkLink(b)
	case mcp.EmbeddedResource:
		return checkEmbedded(&b)
	case *mcp.EmbeddedResource:
		if b == nil {
			return errNilBlock
		}
		return checkEmbedded(b)
	case mcp.ToolUseContent, *mcp.ToolUseContent, mcp.ToolResultContent, *mcp.ToolResultContent:
		return fmt.Errorf("a %T is sampling content, which a tool result cannot carry", c)
	}
	return nil // a block of the tool's own type, which encoding checks
}

var errNilBlock = errors.New("the block is nil")

// checkType returns why a block of Go type name whose type field is typ
// is not one of kind want, or nil.
func checkType(name, typ, want string) error {
	if typ != want {
		return fmt.Errorf("a %s's type field is %q, not %q", name, typ, want)
	}
	return nil
}

func checkLink(l *mcp.ResourceLink) error {
	if err := checkType("mcp.ResourceLink", l.Type, mcp.ContentTypeLink); err != nil {
		return err
	}
	if l.URI == "" {
		return errors.New("a resource link needs its uri")
	}
	return nil
}

func checkEmbedded(e *mcp.EmbeddedResource) error {
	if err := checkType("mcp.EmbeddedResource", e.Type, mcp.ContentTypeResource); err != nil {
		return err
	}
	return checkResourceContents(e.Resource)
}

// checkResourceContents returns why an embedded resource's contents r
// cannot be read, or nil.
func checkResourceContents(r mcp.ResourceContents) error {
	var uri string
	switch r := r.(type) {
	case mcp.TextResourceContents:
		uri = r.URI
	case *mcp.TextResourceContents:
		if r == nil {
			return errors.New("an embedded resource needs its resource")
		}
		uri = r.URI
	case mcp.BlobResourceContents:
		uri = r.URI
	case *mcp.BlobResourceContents:
		if r == nil {
			return errors.New("an embedded resource needs its resource")
		}
		uri = r.URI
	case nil:
		return errors.New("an embedded resource needs its resource")
	default:
		return fmt.Errorf("an embedded resource of a %T, which mcp-go cannot send", r)
	}
	if uri == "" {
		return errors.New("an embedded resource needs its uri")
	}
	return nil
}

// plainResult reports whether r certainly encodes, without encoding it
// (adapter.Plain): the common results are.
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
	if r.StructuredContent != nil && !adapter.Plain(r.StructuredContent) {
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
	return a.Annotations == nil || a.Annotations.Priority == nil || adapter.Plain(*a.Annotations.Priority)
}

func plainMeta(m *mcp.Meta) bool {
	return adapter.Plain(m.ProgressToken) && adapter.Plain(m.AdditionalFields)
}

// validateStructured validates structured content against a compiled
// output schema as mcp-go does, through its JSON encoding.
func validateStructured(sch *jsonschema.Schema, structured any) error {
	raw, err := adapter.StructuredJSON(structured)
	if err != nil {
		return fmt.Errorf("mcpgo: %w", err)
	}
	return validateJSON(sch, raw)
}

// validateJSON validates the JSON raw against sch. The error quotes the
// offending values: a raw cause, for the server only.
func validateJSON(sch *jsonschema.Schema, raw json.RawMessage) error {
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
// outputValidator pointer (server.WithOutputSchemaValidation), or nil when
// this mcp-go has none; computed once. mcp-go v1.2 has no accessor.
var outputValidatorField = func() []int {
	f, ok := reflect.TypeFor[server.MCPServer]().FieldByName("outputValidator")
	if !ok || f.Type.Kind() != reflect.Pointer {
		return nil
	}
	return f.Index
}()

// validatesOutput reports whether s validates tool outputs; without the
// field it assumes so, which is only stricter.
func validatesOutput(s *server.MCPServer) bool {
	if s == nil {
		return false
	}
	return outputValidatorField == nil || !reflect.ValueOf(s).Elem().FieldByIndex(outputValidatorField).IsNil()
}

// lookupTool finds the tool mcp-go runs for name, as handleToolCall does.
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

// compileOutputSchema compiles raw as mcp-go does; a schema that does not
// compile is nil, and mcp-go skips it too.
func compileOutputSchema(name string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	// mcp-go's URL (server/input_validation.go), so a name fails alike.
	return compileAt("mem:///mcp-go/tools/"+name+"/input-schema.json", doc)
}

// checkNativeOutput validates a native tool's success against its output
// schema when the server validates outputs, as mcp-go would: both its
// StructuredContent (checked) and RawStructuredContent (sent when set).
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
	sch, _ := e.schemas.Get(name, raw, func() (*jsonschema.Schema, error) { return compileOutputSchema(name, raw) })
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

// checkAnswer checks any answer for mcp-go: it encodes and, where the
// server validates outputs, passes the output schema.
func (e *engine) checkAnswer(ctx context.Context, name string, r *mcp.CallToolResult) error {
	if err := checkEncodable(r); err != nil {
		return err
	}
	return e.checkNativeOutput(ctx, name, r)
}
