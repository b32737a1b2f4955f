package mcpsdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// ErrNilTool is returned by [AddTool] for a nil *mcp.Tool or server.
var ErrNilTool = errors.New("mcpsdk: AddTool needs a non-nil server and *mcp.Tool")

// AddTool registers a toolmw Handler as the tool t of s and never panics:
// a nil h is an error wrapping [toolctx.ErrNilHandler], a name outside the
// MCP rules a [*errs.ToolNameError], and an input schema that is missing,
// does not compile or is not of type "object", or an output schema that
// does not compile, a [*errs.ToolSchemaError]; nothing is registered then.
// The arguments are validated against the input schema (defaults applied)
// before h runs, and with an output schema h's success must carry
// conforming structured content (else an internal, scrubbed failure).
// With [Install] on s, h's result reaches the chain as it is; without it, h
// still runs contained and its result is normalized.
func AddTool(s *mcp.Server, t *mcp.Tool, h toolctx.Handler, opts ...Option) error {
	if s == nil || t == nil {
		return ErrNilTool
	}
	cfg, err := adapter.NewToolConfig(adapterName, "mcpsdk.AddTool", t.Name, h == nil, opts...)
	if err != nil {
		return err
	}
	if t.InputSchema == nil {
		return &errs.ToolSchemaError{Tool: t.Name, Schema: errs.SchemaInput, Err: errors.New(`the input schema is missing; use {"type": "object"} for a tool that takes any object`)}
	}
	in, err := compileSchema(t.InputSchema)
	if err != nil {
		return &errs.ToolSchemaError{Tool: t.Name, Schema: errs.SchemaInput, Err: err}
	}
	if typ := in.Schema().Type; typ != "object" {
		return &errs.ToolSchemaError{Tool: t.Name, Schema: errs.SchemaInput, Err: fmt.Errorf(`the input schema must have type "object", not %q`, typ)}
	}
	var out *jsonschema.Resolved
	if t.OutputSchema != nil {
		if out, err = compileSchema(t.OutputSchema); err != nil {
			return &errs.ToolSchemaError{Tool: t.Name, Schema: errs.SchemaOutput, Err: err}
		}
	}
	tt := *t
	tool := &registeredTool{cfg: cfg, h: h, in: in, out: out, defaults: hasDefaults(in.Schema())}
	return adapter.Register("the SDK", tt.Name, func() { s.AddTool(&tt, tool.handle) })
}

// AddTypedTool is [AddTool] with [toolctx.Typed](fn). A nil t.InputSchema
// is inferred from In, and a nil t.OutputSchema from Out unless Out is any,
// as the SDK infers them; a type with no schema is a [*errs.ToolSchemaError].
func AddTypedTool[In, Out any](s *mcp.Server, t *mcp.Tool, fn toolctx.TypedFunc[In, Out], opts ...Option) error {
	if s == nil || t == nil {
		return ErrNilTool
	}
	if _, err := adapter.NewToolConfig(adapterName, "mcpsdk.AddTypedTool", t.Name, fn == nil, opts...); err != nil {
		return err
	}
	tt := *t
	if tt.InputSchema == nil {
		sch, err := jsonschema.For[In](nil)
		if err != nil {
			return &errs.ToolSchemaError{Tool: t.Name, Schema: errs.SchemaInput, Err: err}
		}
		tt.InputSchema = sch
	}
	if tt.OutputSchema == nil && reflect.TypeFor[Out]() != reflect.TypeFor[any]() {
		sch, err := jsonschema.For[Out](nil)
		if err != nil {
			return &errs.ToolSchemaError{Tool: t.Name, Schema: errs.SchemaOutput, Err: err}
		}
		tt.OutputSchema = sch
	}
	return AddTool(s, &tt, toolctx.Typed(fn), opts...)
}

// compileSchema resolves a schema given as a *jsonschema.Schema or as
// anything that encodes to one (json.RawMessage, map[string]any, ...).
func compileSchema(v any) (*jsonschema.Resolved, error) {
	sch, ok := v.(*jsonschema.Schema)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		sch = new(jsonschema.Schema)
		if err := json.Unmarshal(b, sch); err != nil {
			return nil, fmt.Errorf("decode as a JSON Schema: %w", err)
		}
	}
	if sch == nil {
		return nil, errors.New("the schema is nil")
	}
	return sch.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
}

type registeredTool struct {
	cfg      *adapter.Config
	h        toolctx.Handler
	in, out  *jsonschema.Resolved
	defaults bool // the input schema may have defaults to apply
}

// hasDefaults reports whether a schema may declare a default anywhere
// (conservatively: its JSON mentions "default").
func hasDefaults(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err != nil || bytes.Contains(b, []byte(`"default"`))
}

func (t *registeredTool) handle(ctx context.Context, sreq *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if run := adapter.InvocationFrom[invocation](ctx); run != nil {
		inv := &run.State
		// Inside the adapter's middleware: the chain gets the result as it
		// is; the SDK an empty success, or the input requests.
		req := inv.req
		if inv.hasDirect {
			// The next round of the SDK's legacy bridge (an older client).
			r := *req
			r.InputResponses, r.RequestState = adapter.RawValues(sreq.Params.InputResponses), sreq.Params.RequestState
			req = &r
		}
		res := t.call(ctx, req)
		inv.direct, inv.hasDirect = res, true
		if res.NeedsInput() {
			// For the bridge; requests that do not encode fail the
			// chain's result too.
			if out, err := toSDKResult(nil, res); err == nil {
				return out, nil
			}
		}
		return &mcp.CallToolResult{}, nil
	}
	// No adapter middleware on this server: the kit answers.
	c := &adapter.Call[*mcp.CallToolResult]{}
	ctx = fill(t.cfg, ctx, &c.Request, sreq)
	return c.Serve(ctx, t.cfg, toolctx.HandlerFunc(t.call), alone{t.cfg}, &sender{sdkCtx: ctx, sreq: sreq}), nil
}

// alone is the codec of a registered tool without the adapter's middleware.
type alone struct{ cfg *adapter.Config }

// Encode implements adapter.Codec: a success that cannot be encoded is a
// raw failure.
func (a alone) Encode(ctx context.Context, res *toolctx.CallResult) (*mcp.CallToolResult, error) {
	if res != nil && !res.IsError {
		out, err := wireResult(nil, res)
		if err == nil {
			return out, nil
		}
		res = toolctx.ErrorResult(err)
	}
	return wireResult(nil, toolctx.Normalized(ctx, res, a.cfg.Normalizer))
}

// Failure implements adapter.Codec.
func (alone) Failure(pub errs.Public) *mcp.CallToolResult { return failureResult(pub) }

// call validates the arguments, runs the handler and checks its output.
func (t *registeredTool) call(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	args, err := applyInputSchema(req.Arguments.JSON(), t.in, t.defaults)
	if err != nil {
		return toolctx.ErrorResult(invalidArguments(err))
	}
	if !bytes.Equal(args, req.Arguments.JSON()) {
		r := *req
		r.Arguments = toolctx.RawArguments(args)
		req = &r
	}
	res := t.h.CallTool(ctx, req)
	if t.out == nil {
		return res
	}
	raw, err := adapter.CheckOutput(res, t.validateOutput)
	if err != nil {
		return toolctx.ErrorResult(fmt.Errorf("tool %q: %w", req.Tool, err))
	}
	if raw != nil {
		r := *res
		r.StructuredContent = raw // the SDK copies the bytes validated
		res = &r
	}
	return res
}

// applyInputSchema validates raw arguments against the input schema, with
// its defaults applied, as the SDK does to a typed tool's arguments before
// it calls the tool (mcp/tool.go, applySchema), and returns the arguments
// to pass on.
func applyInputSchema(raw json.RawMessage, in *jsonschema.Resolved, defaults bool) (json.RawMessage, error) {
	v := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, decodeError{raw: raw, err: err}
		}
	}
	var inst any = v
	if defaults {
		if err := in.ApplyDefaults(&inst); err != nil {
			return nil, fmt.Errorf("applying schema defaults:\n%w", err)
		}
	}
	if err := in.Validate(&inst); err != nil {
		return nil, err
	}
	if !defaults {
		return raw, nil
	}
	return json.Marshal(inst)
}

func (t *registeredTool) validateOutput(raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("decode structured content: %w", err)
	}
	if err := t.out.Validate(&v); err != nil {
		return fmt.Errorf("validating tool output: %w", err)
	}
	return nil
}
