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

// AddTool registers h as the tool described by tool on s, checking what
// mcp-go would accept silently or panic on: a nil h is an error wrapping
// [toolctx.ErrNilHandler], the name a [*errs.ToolNameError], and input and
// output schemas that are not JSON objects of type "object" or do not
// compile (with mcp-go's JSON Schema library), or x-mcp-header annotations
// mcp-go refuses, a [*errs.ToolSchemaError]; nothing is registered then. A
// tool of the same name replaces the previous one, as in mcp-go. Behind
// the adapter's [Middleware] the chain sees h's result as it is; without
// it, h runs contained and its result is normalized. Its output is checked
// against its output schema.
func AddTool(s *server.MCPServer, tool mcp.Tool, h toolctx.Handler, opts ...Option) error {
	cfg, err := adapter.NewToolConfig(adapterName, "mcpgo.AddTool", tool.Name, h == nil, opts...)
	if err != nil {
		return err
	}
	out, err := checkSchemas(&tool)
	if err != nil {
		return err
	}
	r := &registered{cfg: cfg, h: h, name: tool.Name, out: out}
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
	return compileAt("mem:///toolmw/tools/"+tool+"/"+kind+"-schema.json", doc)
}

// compileAt compiles the schema document doc under url.
func compileAt(url string, doc any) (*jsonschema.Schema, error) {
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
	out  *jsonschema.Schema // nil: no output schema
}

func (r *registered) handle(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if run := adapter.InvocationFrom[invocation](ctx); run != nil {
		// The adapter's chain is outside: it gets the result as it is,
		// mcp-go middleware in between the public conversion.
		inv := &run.State
		res, out := r.result(ctx, adapter.Native(func() *toolctx.CallResult { return r.h.CallTool(ctx, inv.req) }))
		inv.stash, inv.stashFor = res, out
		if !out.IsError {
			inv.checked = out
		}
		return out, nil
	}
	return r.alone(ctx, &request), nil
}

// result returns h's result for the chain and its public conversion; a
// success must pass the output schema and encode, else it is a raw failure.
func (r *registered) result(ctx context.Context, res *toolctx.CallResult) (*toolctx.CallResult, *mcp.CallToolResult) {
	norm := toolctx.Normalized(ctx, res, r.cfg.Normalizer)
	if res == nil {
		res = norm
	}
	if norm.IsError {
		return res, toMCP(norm)
	}
	var err error
	if r.out != nil {
		_, err = adapter.CheckOutput(norm, func(raw json.RawMessage) error { return validateJSON(r.out, raw) })
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

// alone runs h when no adapter is outside: the kit answers for it.
func (r *registered) alone(ctx context.Context, mreq *mcp.CallToolRequest) *mcp.CallToolResult {
	c := &adapter.Call[*mcp.CallToolResult]{}
	fillRequest(&c.Request, ctx, mreq, r.cfg.Transport)
	s := new(sender)
	s.init(ctx, mreq)
	return c.Serve(ctx, r.cfg, r.h, aloneCodec{r}, s)
}

type aloneCodec struct{ r *registered }

// Encode implements adapter.Codec.
func (a aloneCodec) Encode(ctx context.Context, res *toolctx.CallResult) (*mcp.CallToolResult, error) {
	_, out := a.r.result(ctx, res)
	return out, nil
}

// Failure implements adapter.Codec.
func (aloneCodec) Failure(pub errs.Public) *mcp.CallToolResult { return failureResult(pub) }
