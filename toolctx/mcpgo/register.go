package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// ErrNilHandler is returned by [AddTool] for a nil handler.
var ErrNilHandler = errors.New("mcpgo: AddTool needs a non-nil handler")

// AddTool registers h as the tool described by tool on s.
//
// It checks at registration what mcp-go would otherwise accept silently or
// panic on: the tool name ([errs.CheckToolName], a [*errs.ToolNameError]),
// and the input and output schemas, which must be valid JSON and compile
// with the JSON Schema library mcp-go validates with
// (github.com/santhosh-tekuri/jsonschema/v6), and the x-mcp-header
// annotations of the input schema (a [*errs.ToolSchemaError]). Nothing is
// registered when it returns an error. A tool of the same name replaces the
// previous one, as in mcp-go.
//
// When the server has the adapter's [Middleware] installed, h runs as the
// innermost handler of that chain and the chain sees h's result as it is,
// raw cause included. When it has not, h still runs safely on its own: a
// panic is recovered, the result is normalized with the options' normalizer
// and only public fields are sent; no interceptor runs.
func AddTool(s *server.MCPServer, tool mcp.Tool, h toolctx.Handler, opts ...Option) error {
	if h == nil {
		return ErrNilHandler
	}
	if err := errs.CheckToolName(tool.Name); err != nil {
		return err
	}
	out, err := checkSchemas(&tool)
	if err != nil {
		return err
	}
	r := &registered{cfg: newConfig(opts), h: h, name: tool.Name, out: out}
	// mcp-go panics on a name registered as a task tool and on invalid
	// header annotations: Register reports either as an error.
	return adapter.Register("mcp-go", tool.Name, func() { s.AddTool(tool, r.handle) })
}

// checkSchemas compiles the schemas as the client sees them (the tool's
// JSON encoding) and returns the compiled output schema (nil for none).
func checkSchemas(tool *mcp.Tool) (*jsonschema.Schema, error) {
	b, err := json.Marshal(tool)
	if err != nil {
		return nil, &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: err}
	}
	var enc struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(b, &enc); err != nil {
		return nil, &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: err}
	}
	if _, err := compileSchema(tool.Name, "input", enc.InputSchema, true); err != nil {
		return nil, &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: err}
	}
	out, err := compileSchema(tool.Name, "output", enc.OutputSchema, false)
	if err != nil {
		return nil, &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaOutput, Err: err}
	}
	if err := mcp.ValidateParamHeaderAnnotations(tool); err != nil {
		return nil, &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: err}
	}
	return out, nil
}

func compileSchema(tool, kind string, raw json.RawMessage, required bool) (*jsonschema.Schema, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		if required {
			return nil, errors.New("the schema is missing")
		}
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("the schema is not a JSON object")
	}
	if t, _ := doc.(map[string]any)["type"].(string); t != "object" {
		return nil, fmt.Errorf("the schema's type is %q; MCP needs \"object\"", t)
	}
	url := "mem:///toolmw/tools/" + tool + "/" + kind + "-schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

type registered struct {
	cfg  *adapter.Config
	h    toolctx.Handler
	name string
	// out is the tool's compiled output schema, or nil.
	out *jsonschema.Schema
}

// handle is the mcp-go handler of a tool registered with AddTool.
func (r *registered) handle(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if c := callFrom(ctx); c != nil && c.cur != nil {
		// The adapter's chain is outside (and runs contained, on a
		// coroutine of its own, so a Goexit here is its to report): hand
		// it the result as it is, raw cause included, and answer the
		// mcp-go middleware in between (if any) with the public
		// conversion.
		res, out := r.result(ctx, adapter.Native(func() *toolctx.CallResult { return r.h.CallTool(ctx, c.cur) }))
		c.stash, c.stashFor = res, out
		if !out.IsError {
			c.checked = out
		}
		return out, nil
	}
	return r.alone(ctx, &request), nil
}

// result checks a successful result of h as the client will get it: it
// must pass the tool's output schema (when the tool has one) and encode. A
// result that does not is replaced by a raw failure whose cause says why.
// It returns the result for the chain and its public conversion.
func (r *registered) result(ctx context.Context, res *toolctx.CallResult) (*toolctx.CallResult, *mcp.CallToolResult) {
	norm := toolctx.Normalized(ctx, res, r.cfg.Normalizer)
	if res == nil {
		res = norm
	}
	if norm.IsError {
		return res, toMCP(norm)
	}
	var err error
	if r.out != nil && !norm.NeedsInput() { // an input-required round has no output yet
		if norm.StructuredContent == nil {
			err = errNoStructuredContent
		} else {
			err = validateStructured(r.out, norm.StructuredContent)
		}
	}
	out := toMCP(norm)
	if err == nil {
		err = checkEncodable(out)
	}
	if err == nil {
		return res, out
	}
	res = toolctx.ErrorResult(fmt.Errorf("tool %q: %w", r.name, err))
	return res, toMCP(toolctx.Normalized(ctx, res, r.cfg.Normalizer))
}

// alone runs h when no adapter is outside: the kit runs it contained and
// answers for it (see adapter.Call.Serve).
func (r *registered) alone(ctx context.Context, mreq *mcp.CallToolRequest) *mcp.CallToolResult {
	c := &adapter.Call[*mcp.CallToolResult]{}
	fillRequest(&c.Request, ctx, mreq, r.cfg.Transport)
	s := new(sender)
	s.init(ctx, mreq)
	return c.Serve(ctx, r.cfg, r.h, aloneCodec{r}, s)
}

// aloneCodec is the codec of a registered tool without an adapter outside.
type aloneCodec struct{ r *registered }

// Encode implements adapter.Codec.
func (a aloneCodec) Encode(ctx context.Context, res *toolctx.CallResult) (*mcp.CallToolResult, error) {
	_, out := a.r.result(ctx, res)
	return out, nil
}

// Failure implements adapter.Codec.
func (aloneCodec) Failure(pub errs.Public) *mcp.CallToolResult { return failureResult(pub) }
