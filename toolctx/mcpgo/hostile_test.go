package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// This file holds the hostile shapes of issue 12 on mcp-go: outputs that
// fail their schema, handlers' own JSON-RPC wire errors, raw errors worded
// like mcp-go's validation messages, results that cannot be encoded,
// runtime.Goexit, and mcp-go's typed handlers. Each shape carries a canary;
// no byte any client receives may hold it, or a Go stack.

// stackMarkers are strings of a Go stack trace.
var stackMarkers = []string{"goroutine ", ".go:", "runtime/debug", "panic("}

// hostileArgs are the arguments of every hostile tool.
type hostileArgs struct {
	Shape  string `json:"shape"`
	Canary string `json:"canary"`
}

var hostileInput = mcp.WithInputSchema[hostileArgs]()

// hostileOutput is the output schema of the *_schema tools: the canaries
// (upper case, digits) never match the pattern, and no other property is
// allowed, so a violation's message quotes the canary.
const hostileOutput = `{"type":"object","properties":{"v":{"type":"string","pattern":"^[a-z]{0,8}$"}},"additionalProperties":false}`

// shape is one hostile behaviour of a handler.
type shape struct {
	name string
	// native is what an mcp-go handler returns (it may panic or Goexit).
	native func(canary string) (*mcp.CallToolResult, error)
	// tm is what a toolmw handler returns, nil when the shape has no
	// toolmw form.
	tm func(canary string) *toolctx.CallResult
	// typed is what a structured typed handler returns, nil when the shape
	// has no typed form.
	typed func(canary string) (any, error)
	// inCause: the audit row's raw cause holds the canary.
	inCause bool
	// schema: the result fails the output schema only; a native tool on a
	// server that does not validate outputs delivers it, as mcp-go does.
	schema bool
	// goexit: the handler calls runtime.Goexit.
	goexit bool
	// err and val are the raw error or the value of the shape, for the
	// randomized generator to wrap and place; nil when it has none.
	err func(canary string) error
	val func(canary string) any
}

// marshalErr is a value whose MarshalJSON fails with a raw message.
type marshalErr struct{ msg string }

func (m marshalErr) MarshalJSON() ([]byte, error) { return nil, errors.New("serialize: " + m.msg) }

// marshalPanic is a value whose MarshalJSON panics.
type marshalPanic struct{ msg string }

func (m marshalPanic) MarshalJSON() ([]byte, error) { panic("marshal: " + m.msg) }

// flaky fails to encode the first time only, as a MarshalJSON reading a
// changing source might.
type flaky struct {
	mu    sync.Mutex
	calls int
	msg   string
}

func (f *flaky) MarshalJSON() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls == 1 {
		return nil, errors.New("flaky: " + f.msg)
	}
	return []byte(`{"v":"ok"}`), nil
}

// keyErr is a map key whose MarshalText fails.
type keyErr struct{ msg string }

func (k keyErr) MarshalText() ([]byte, error) { return nil, errors.New("key: " + k.msg) }

// badContent is an mcp.Content (through the embedded TextContent) that does
// not encode.
type badContent struct {
	mcp.TextContent
	msg string
}

func (b badContent) MarshalJSON() ([]byte, error) { return nil, errors.New("content: " + b.msg) }

// wireError is a handler's error that also renders itself as a JSON-RPC
// error, with a protocol code and its own data.
type wireError struct{ msg string }

func (w wireError) Error() string { return "invalid params: " + w.msg }
func (w wireError) JSONRPCError() mcp.JSONRPCError {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.JSONRPCErrorDetails{Code: mcp.INVALID_PARAMS, Message: w.msg, Data: map[string]any{"secret": w.msg}}}
}

// nested puts v at the bottom of depth levels of maps and slices.
func nested(v any, depth int) any {
	for i := range depth {
		if i%2 == 0 {
			v = map[string]any{"k": v}
		} else {
			v = []any{v}
		}
	}
	return v
}

func cyclic(canary string) map[string]any {
	m := map[string]any{"canary": canary}
	m["self"] = m
	return m
}

func structured(v any) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}, StructuredContent: v}, nil
}

func tmStructured(v any) *toolctx.CallResult {
	return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ok"}}, StructuredContent: v}
}

func elicitation(canary string) mcp.URLElicitationRequiredError {
	return mcp.URLElicitationRequiredError{Elicitations: []mcp.ElicitationParams{{Message: canary, URL: "https://" + canary + ".example/x"}}}
}

// shapes returns every hostile shape. Unencodable values are built per call.
func shapes() []shape {
	errShape := func(name string, mk func(c string) error) shape {
		return shape{name: name, inCause: true, err: mk,
			native: func(c string) (*mcp.CallToolResult, error) { return nil, mk(c) },
			tm:     func(c string) *toolctx.CallResult { return toolctx.ErrorResult(mk(c)) },
			typed:  func(c string) (any, error) { return nil, mk(c) },
		}
	}
	valShape := func(name string, inCause bool, mk func(c string) any) shape {
		return shape{name: name, inCause: inCause, val: mk,
			native: func(c string) (*mcp.CallToolResult, error) { return structured(mk(c)) },
			tm:     func(c string) *toolctx.CallResult { return tmStructured(mk(c)) },
			typed:  func(c string) (any, error) { return mk(c), nil },
		}
	}
	return []shape{
		// 1. Output that fails its output schema.
		{name: "schema_pattern", inCause: true, schema: true,
			native: func(c string) (*mcp.CallToolResult, error) { return structured(map[string]any{"v": c}) },
			tm:     func(c string) *toolctx.CallResult { return tmStructured(map[string]any{"v": c}) }},
		{name: "schema_extra", inCause: true, schema: true,
			native: func(c string) (*mcp.CallToolResult, error) { return structured(map[string]any{c: 1}) },
			tm:     func(c string) *toolctx.CallResult { return tmStructured(map[string]any{c: 1}) }},
		{name: "schema_raw", inCause: true, schema: true,
			native: func(c string) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}, RawStructuredContent: json.RawMessage(`{"v":"` + c + `"}`)}, nil
			},
			tm: func(c string) *toolctx.CallResult { return tmStructured(json.RawMessage(`{"v":"` + c + `"}`)) }},
		// 2. A handler's own JSON-RPC wire error.
		// (The elicitations, with the canary, are the error's Data only.)
		noCause(errShape("wire_elicitation", func(c string) error { return elicitation(c) })),
		noCause(errShape("wire_elicitation_ptr", func(c string) error { e := elicitation(c); return &e })),
		noCause(errShape("wire_elicitation_wrapped", func(c string) error { return fmt.Errorf("step: %w", elicitation(c)) })),
		errShape("wire_jsonrpc", func(c string) error { return wireError{msg: c} }),
		// 3. Raw errors worded like mcp-go's own messages.
		errShape("text_input_validation", func(c string) error { return errors.New("input schema validation failed: /kind: " + c) }),
		errShape("text_invalid_arguments", func(c string) error { return errors.New("invalid arguments: " + c) }),
		errShape("text_output_validation", func(c string) error { return errors.New("output schema validation failed: " + c) }),
		errShape("text_not_found", func(c string) error { return fmt.Errorf("tool '%s' not found: %w", c, server.ErrToolNotFound) }),
		errShape("text_structured_failure", func(c string) error { return errors.New("tool execution failed: " + c) }),
		// 4. Results that cannot be encoded.
		valShape("enc_chan", false, func(c string) any { return map[string]any{"c": make(chan int), "canary": c} }),
		valShape("enc_func", false, func(c string) any { return map[string]any{"f": func() {}, "canary": c} }),
		valShape("enc_nan", false, func(c string) any { return map[string]any{"n": math.NaN(), "canary": c} }),
		valShape("enc_inf", false, func(c string) any { return []any{c, math.Inf(-1)} }),
		valShape("enc_cyclic", false, func(c string) any { return cyclic(c) }),
		valShape("enc_marshal_error", true, func(c string) any { return map[string]any{"v": marshalErr{c}} }),
		valShape("enc_marshal_panic", true, func(c string) any { return marshalPanic{c} }),
		valShape("enc_json_number", true, func(c string) any { return map[string]any{"n": json.Number(c)} }),
		valShape("enc_text_key", true, func(c string) any { return map[keyErr]int{{c}: 1} }),
		valShape("enc_deep_nan", false, func(c string) any { return nested(map[string]any{"canary": c, "n": math.NaN()}, 40) }),
		valShape("enc_flaky", true, func(c string) any { return &flaky{msg: c} }),
		valShape("enc_raw_invalid", false, func(c string) any { return json.RawMessage(`{"v": ` + c) }),
		{name: "enc_meta", inCause: false,
			native: func(c string) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{"canary": c, "ch": make(chan int)}}}, Content: []mcp.Content{mcp.NewTextContent("ok")}}, nil
			},
			tm: func(c string) *toolctx.CallResult {
				return &toolctx.CallResult{Meta: map[string]any{"canary": c, "f": func() {}}, Content: []toolctx.Content{&toolctx.Text{Text: "ok"}}}
			}},
		{name: "enc_content_meta", inCause: true,
			native: func(c string) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "ok", Meta: &mcp.Meta{AdditionalFields: map[string]any{"v": marshalErr{c}}}}}}, nil
			},
			tm: func(c string) *toolctx.CallResult {
				return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ok", Meta: map[string]any{"v": marshalErr{c}}}}}
			}},
		{name: "enc_priority_nan", inCause: false,
			native: func(c string) (*mcp.CallToolResult, error) {
				p := math.NaN()
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "ok " + c, Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: &p}}}}}, nil
			},
			tm: func(c string) *toolctx.CallResult {
				p := math.Inf(1)
				return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ok " + c, Annotations: &toolctx.Annotations{Priority: &p}}}}
			}},
		{name: "enc_custom_content", inCause: true,
			native: func(c string) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{badContent{TextContent: mcp.NewTextContent("x"), msg: c}}}, nil
			}},
		{name: "enc_own_error_content", inCause: false,
			native: func(c string) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{badContent{TextContent: mcp.NewTextContent("x"), msg: c}}}, nil
			}},
		{name: "enc_public_detail", inCause: false,
			native: func(c string) (*mcp.CallToolResult, error) {
				return nil, errs.NotFound("no such record").WithDetail(map[string]any{"v": marshalErr{c}})
			},
			tm: func(c string) *toolctx.CallResult {
				return toolctx.ErrorResult(errs.NotFound("no such record").WithDetail(map[string]any{"ch": make(chan int), "v": c}))
			}},
		// 5. runtime.Goexit.
		{name: "goexit", goexit: true,
			native: func(c string) (*mcp.CallToolResult, error) { runtime.Goexit(); return nil, nil },
			tm:     func(c string) *toolctx.CallResult { runtime.Goexit(); return nil },
			typed:  func(c string) (any, error) { runtime.Goexit(); return nil, nil }},
	}
}

func noCause(s shape) shape { s.inCause = false; return s }

func shapeByName(name string) shape {
	for _, s := range shapes() {
		if s.name == name {
			return s
		}
	}
	panic("no shape " + name)
}

// hostileInterceptor answers the tool "mw" itself with the shape's toolmw
// result (or Goexit), as an interceptor that replaces results would.
func hostileInterceptor(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		if req.Tool != "mw" {
			return next.CallTool(ctx, req)
		}
		var a hostileArgs
		_ = json.Unmarshal(req.Arguments.JSON(), &a)
		sh := shapeByName(a.Shape)
		if sh.goexit {
			runtime.Goexit()
		}
		return sh.tm(a.Canary)
	})
}

// hostileChain is the recorder's chain with the hostile interceptor inside
// After and Diagnostics.
func (r *recorder) hostileChain() middleware.Chain {
	return middleware.New(
		middleware.After(r.after),
		middleware.Diagnostics(r.diag),
		r.capture,
		hostileInterceptor,
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// hostileTools are the tools of hostileServer and the shapes each runs.
var hostileTools = []string{"n_plain", "n_schema", "n schema", "tm_plain", "tm_schema", "ty_structured", "ty_helper", "ty_typed", "mw"}

// hostileServer serves the hostile tools behind the recorder's chain, with
// input validation and, when validate, output validation.
func hostileServer(t testing.TB, rec *recorder, validate bool) *server.MCPServer {
	opts := []server.ServerOption{mcpgo.ServerOption(rec.hostileChain().Middleware(), mcpgo.WithFallbackLogger(discardLogger())), server.WithInputSchemaValidation()}
	if validate {
		opts = append(opts, server.WithOutputSchemaValidation())
	}
	s := server.NewMCPServer("hostile", "1.0.0", opts...)
	native := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a hostileArgs
		if err := req.BindArguments(&a); err != nil {
			return nil, err
		}
		return shapeByName(a.Shape).native(a.Canary)
	}
	tm := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		var a hostileArgs
		if err := json.Unmarshal(req.Arguments.JSON(), &a); err != nil {
			return toolctx.ErrorResult(err)
		}
		return shapeByName(a.Shape).tm(a.Canary)
	})
	typed := func(ctx context.Context, req mcp.CallToolRequest, a hostileArgs) (any, error) {
		return shapeByName(a.Shape).typed(a.Canary)
	}
	s.AddTool(mcp.NewTool("n_plain", hostileInput), native)
	withOutput := func(tool mcp.Tool) mcp.Tool {
		tool.RawOutputSchema = json.RawMessage(hostileOutput)
		return tool
	}
	s.AddTool(withOutput(mcp.NewTool("n_schema", hostileInput)), native)
	// mcp-go checks no native tool name: one with a space.
	s.AddTool(withOutput(mcp.NewTool("n schema", hostileInput)), native)
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("tm_plain", hostileInput), tm))
	require.NoError(t, mcpgo.AddTool(s, withOutput(mcp.NewTool("tm_schema", hostileInput)), tm))
	s.AddTool(mcp.NewTool("ty_structured", hostileInput), mcp.NewStructuredToolHandler(typed))
	s.AddTool(mcp.NewTool("ty_helper", hostileInput), mcpgo.StructuredHandler(typed))
	s.AddTool(mcp.NewTool("ty_typed", hostileInput), mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, a hostileArgs) (*mcp.CallToolResult, error) {
		return shapeByName(a.Shape).native(a.Canary)
	}))
	s.AddTool(withOutput(mcp.NewTool("mw", hostileInput)), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("not reached"), nil
	})
	s.AddTool(mcp.NewTool("ok"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello"), nil
	})
	return s
}

// applies reports whether tool runs shape sh, and whether mcp-go on a
// server that validates outputs when validate would deliver it as a
// success anyway (a native tool's output that fails only a schema mcp-go
// does not check).
func applies(tool string, sh shape, validate bool) bool {
	switch tool {
	case "n_plain", "ty_typed":
		return !sh.schema
	case "n_schema", "n schema":
		return !sh.schema || validate
	case "tm_plain":
		return sh.tm != nil && !sh.schema
	case "tm_schema":
		return sh.tm != nil
	case "mw":
		return sh.tm != nil && (!sh.schema || validate)
	case "ty_structured", "ty_helper":
		return sh.typed != nil
	}
	return false
}

func assertClean(t *testing.T, w *wire, what string) {
	t.Helper()
	raw := string(w.bytes())
	if i := strings.Index(raw, "CANARY"); i >= 0 {
		t.Fatalf("%s: %s: the client received a canary: %q", w.name, what, raw[max(0, i-300):min(len(raw), i+100)])
	}
	for _, m := range stackMarkers {
		assert.NotContains(t, raw, m, "%s: %s: a Go stack marker reached the client", w.name, what)
	}
}

// TestHostileShapes runs every hostile shape on every hostile tool, on every
// mcp-go transport, with and without server.WithOutputSchemaValidation: the
// client gets an isError result with the generic message (or the public
// message of a public error) and never the canary; the chain's hooks get
// the failure with its raw cause; the server keeps answering.
func TestHostileShapes(t *testing.T) {
	for _, validate := range []bool{true, false} {
		t.Run(fmt.Sprintf("validate=%v", validate), func(t *testing.T) {
			rec := &recorder{}
			wires := allWires(t, func(t *testing.T) *server.MCPServer { return hostileServer(t, rec, validate) })
			legacy := &wire{name: "in-process-legacy"}
			legacy.client = client.NewClient(&captureTransport{Interface: transport.NewInProcessTransport(hostileServer(t, rec, validate)), w: legacy},
				client.WithProtocolVersion(mcp.ProtocolVersion20251125))
			initialize(t, legacy.client)
			t.Cleanup(func() { _ = legacy.client.Close() })
			wires = append(wires, legacy)
			for _, w := range wires {
				t.Run(w.name, func(t *testing.T) {
					n := 0
					for _, tool := range hostileTools {
						for _, sh := range shapes() {
							if !applies(tool, sh, validate) {
								continue
							}
							n++
							what := tool + "/" + sh.name
							rec.reset()
							canary := fmt.Sprintf("CANARY%d%s", n, strings.ToUpper(strings.ReplaceAll(sh.name, "_", "")))
							res, err := call(t, w, tool, map[string]any{"shape": sh.name, "canary": canary})
							require.NoError(t, err, what)
							require.True(t, res.IsError, "%s: %+v", what, res)
							diags, rows, _ := rec.snapshot()
							switch sh.name {
							case "enc_own_error_content":
								// The handler's own isError result, whose
								// content toolmw cannot convert: the code's
								// default message.
								assert.Equal(t, errs.CodeToolError.DefaultMessage(), text(res), what)
								continue
							case "enc_public_detail":
								// A public error whose detail cannot be
								// encoded: the generic failure.
								assert.Equal(t, errs.GenericMessage, text(res), what)
								continue
							}
							assert.Equal(t, errs.GenericMessage, text(res), what)
							if sh.goexit {
								// After and Diagnostics report a Goexit
								// from their deferred functions.
								require.Len(t, rows, 1, what)
								assert.True(t, rows[0].Outcome.Scrubbed, what)
								assert.Equal(t, errs.CodeInternal, rows[0].Outcome.Public.Code, what)
								assert.ErrorIs(t, rows[0].Cause(), errs.ErrGoexit, what)
								require.Len(t, diags, 1, what)
								assert.ErrorIs(t, diags[0].Cause(), errs.ErrGoexit, what)
								continue
							}
							// Every failure reaches the chain's hooks, an
							// interceptor's result that cannot be sent too
							// (adapter.Sendable).
							require.Len(t, rows, 1, what)
							assert.True(t, rows[0].Outcome.Scrubbed, what)
							assert.Equal(t, errs.CodeInternal, rows[0].Outcome.Public.Code, what)
							require.Len(t, diags, 1, what)
							cause := rows[0].Cause().Error()
							if tool == "tm_schema" && strings.Contains(cause, "returned no structured content") {
								// A toolmw tool with an output schema must
								// return structured content: that failure
								// comes first.
								continue
							}
							if sh.inCause {
								assert.Contains(t, cause, canary, what)
								assert.Contains(t, diags[0].Cause().Error(), canary, what)
							}
						}
						assertClean(t, w, tool)
					}
					res, err := call(t, w, "ok", nil)
					require.NoError(t, err)
					assert.Equal(t, "hello", text(res), "the server still answers")
					assertClean(t, w, "all")
				})
			}
		})
	}
}
