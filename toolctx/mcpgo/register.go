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
func AddTool(s *server.MCPServer, tool mcp.Tool, h toolctx.Handler, opts ...Option) (err error) {
	if h == nil {
		return ErrNilHandler
	}
	if err := errs.CheckToolName(tool.Name); err != nil {
		return err
	}
	if err := checkSchemas(&tool); err != nil {
		return err
	}
	r := &registered{cfg: newConfig(opts), h: h}
	defer func() {
		// mcp-go panics on a name registered as a task tool and on invalid
		// header annotations; report either as an error.
		if v := recover(); v != nil {
			err = &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: fmt.Errorf("mcp-go refused the tool: %v", v)}
		}
	}()
	s.AddTool(tool, r.handle)
	return nil
}

// checkSchemas compiles the schemas as the client sees them (the tool's
// JSON encoding).
func checkSchemas(tool *mcp.Tool) error {
	b, err := json.Marshal(tool)
	if err != nil {
		return &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: err}
	}
	var enc struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(b, &enc); err != nil {
		return &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: err}
	}
	if err := compileSchema(tool.Name, "input", enc.InputSchema, true); err != nil {
		return &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: err}
	}
	if err := compileSchema(tool.Name, "output", enc.OutputSchema, false); err != nil {
		return &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaOutput, Err: err}
	}
	if err := mcp.ValidateParamHeaderAnnotations(tool); err != nil {
		return &errs.ToolSchemaError{Tool: tool.Name, Schema: errs.SchemaInput, Err: err}
	}
	return nil
}

func compileSchema(tool, kind string, raw json.RawMessage, required bool) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		if required {
			return errors.New("the schema is missing")
		}
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return errors.New("the schema is not a JSON object")
	}
	if t, _ := doc.(map[string]any)["type"].(string); t != "object" {
		return fmt.Errorf("the schema's type is %q; MCP needs \"object\"", t)
	}
	url := "mem:///toolmw/tools/" + tool + "/" + kind + "-schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return err
	}
	_, err = c.Compile(url)
	return err
}

type registered struct {
	cfg config
	h   toolctx.Handler
}

// handle is the mcp-go handler of a tool registered with AddTool.
func (r *registered) handle(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if c := callFrom(ctx); c != nil && c.cur != nil {
		// The adapter's chain is outside: hand it the result as it is, raw
		// cause included, and answer the mcp-go middleware in between (if
		// any) with the public conversion.
		res := r.callRecovering(ctx, c.cur)
		norm := toolctx.Normalized(ctx, res, r.cfg.normalizer)
		if res == nil {
			res = norm
		}
		out := toMCP(norm)
		c.stash, c.stashFor = res, out
		return out, nil
	}
	var req toolctx.Request
	fillRequest(&req, ctx, &request, r.cfg.transport)
	res := r.callRecovering(ctx, &req)
	return toMCP(toolctx.Normalized(ctx, res, r.cfg.normalizer)), nil
}

func (r *registered) callRecovering(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
	defer func() {
		if v := recover(); v != nil {
			res = toolctx.ErrorResult(errs.NewPanicError(v))
		}
	}()
	return r.h.CallTool(ctx, req)
}
