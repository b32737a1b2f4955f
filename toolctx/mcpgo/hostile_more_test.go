package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestGoexitLeavesServerAsItWas: more Goexits than mcp-go's stdio server
// has tool workers, from a native handler, a toolmw handler and an
// interceptor, each answered as an internal failure, and the server still
// answers afterwards; in-process the caller's goroutine (this test's) goes
// on. A toolmw handler on a server without the adapter is covered too.
func TestGoexitLeavesServerAsItWas(t *testing.T) {
	const workers = 2
	rec := &recorder{}
	build := func(t *testing.T, withAdapter bool) *server.MCPServer {
		var opts []server.ServerOption
		if withAdapter {
			opts = append(opts, mcpgo.ServerOption(rec.hostileChain().Middleware(), mcpgo.WithFallbackLogger(discardLogger())))
		}
		s := server.NewMCPServer("goexit", "1.0.0", opts...)
		s.AddTool(mcp.NewTool("n_goexit"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			runtime.Goexit()
			return nil, nil
		})
		require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("tm_goexit"), toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			runtime.Goexit()
			return nil
		})))
		s.AddTool(mcp.NewTool("mw", hostileInput), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("not reached"), nil
		})
		s.AddTool(mcp.NewTool("ok"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello"), nil
		})
		return s
	}
	for _, withAdapter := range []bool{true, false} {
		t.Run(fmt.Sprintf("adapter=%v", withAdapter), func(t *testing.T) {
			ws := []*wire{
				inProcessWire(t, build(t, withAdapter)),
				httpWire(t, build(t, withAdapter), nil),
				sseWire(t, build(t, withAdapter)),
				stdioWire(t, build(t, withAdapter), server.WithWorkerPoolSize(workers)),
			}
			tools := []string{"tm_goexit"}
			if withAdapter {
				tools = append(tools, "n_goexit", "mw")
			}
			for _, w := range ws {
				for i := range 3 * workers {
					tool := tools[i%len(tools)]
					rec.reset()
					res, err := call(t, w, tool, map[string]any{"shape": "goexit", "canary": "CANARY-goexit"})
					require.NoError(t, err, "%s %s #%d", w.name, tool, i)
					assert.True(t, res.IsError, "%s %s", w.name, tool)
					assert.Equal(t, errs.GenericMessage, text(res), "%s %s", w.name, tool)
					if withAdapter {
						diags, rows, _ := rec.snapshot()
						require.Len(t, rows, 1, "%s %s: a row", w.name, tool)
						assert.ErrorIs(t, rows[0].Cause(), errs.ErrGoexit, "%s %s", w.name, tool)
						assert.Equal(t, errs.CodeInternal, rows[0].Outcome.Public.Code, "%s %s", w.name, tool)
						require.Len(t, diags, 1, "%s %s: a diagnostics event", w.name, tool)
						assert.ErrorIs(t, diags[0].Cause(), errs.ErrGoexit, "%s %s", w.name, tool)
					}
				}
				res, err := call(t, w, "ok", nil)
				require.NoError(t, err, w.name)
				assert.Equal(t, "hello", text(res), "%s: the server still answers", w.name)
				assertClean(t, w, "goexit")
			}
		})
	}
}

// TestLateRawErrorKeepsRawMessage: a raw error returned after
// middleware.Timeout's deadline is answered with the public timeout on
// every transport, and the audit row keeps the raw message.
func TestLateRawErrorKeepsRawMessage(t *testing.T) {
	rec := &recorder{}
	build := func(t *testing.T) *server.MCPServer {
		chain := middleware.New(
			middleware.After(rec.after),
			middleware.Diagnostics(rec.diag),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
			middleware.Timeout(20*time.Millisecond),
		)
		s := server.NewMCPServer("late", "1.0.0", mcpgo.ServerOption(chain.Middleware()))
		s.AddTool(mcp.NewTool("late", hostileInput), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, errors.New("late: " + req.GetString("canary", ""))
		})
		return s
	}
	for _, w := range allWires(t, build) {
		rec.reset()
		canary := "CANARY-late-" + w.name
		res, err := call(t, w, "late", map[string]any{"canary": canary})
		require.NoError(t, err, w.name)
		assert.True(t, res.IsError, w.name)
		assert.Equal(t, "timeout", errorMeta(res)["code"], w.name)
		_, rows, _ := rec.snapshot()
		require.Len(t, rows, 1, w.name)
		assert.Equal(t, errs.CodeTimeout, rows[0].Outcome.Public.Code, w.name)
		assert.True(t, rows[0].Outcome.Scrubbed, w.name)
		assert.Contains(t, rows[0].Cause().Error(), canary, "%s: the row keeps the raw message", w.name)
		assertClean(t, w, "late")
	}
}

// TestRejectionDecidedByWhere: the hooks decide that mcp-go rejected a call
// before the tool middleware from whether the call entered it, not from
// the answer's text. An mcp-go middleware outside the adapter that replaces
// the chain's answer with text worded like mcp-go's input-validation
// feedback does not make the call a second, rejected one.
func TestRejectionDecidedByWhere(t *testing.T) {
	rec := &recorder{}
	outer := func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := next(ctx, req)
			if req.Params.Name == "relabel" {
				return mcp.NewToolResultError("input schema validation failed: /n: relabelled outside the adapter"), nil
			}
			return res, err
		}
	}
	s := newServerWith(t, server.WithToolHandlerMiddleware(outer), mcpgo.ServerOption(rec.chain().Middleware()), server.WithInputSchemaValidation())
	s.AddTool(mcp.NewTool("relabel"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("fine"), nil
	})
	for _, w := range allWires(t, func(*testing.T) *server.MCPServer { return s }) {
		for _, tc := range []struct {
			tool string
			args map[string]any
			code errs.Code
		}{
			{"relabel", nil, ""},
			{"strict", map[string]any{"n": "x"}, errs.CodeInvalidArguments},
			{"no_such_tool", nil, errs.CodeUnknownTool},
		} {
			rec.reset()
			_, _ = call(t, w, tc.tool, tc.args)
			_, rows, _ := rec.snapshot()
			require.Len(t, rows, 1, "%s %s: one row per call", w.name, tc.tool)
			assert.Equal(t, tc.code, rows[0].Outcome.Public.Code, "%s %s", w.name, tc.tool)
		}
	}
}

// TestWithoutToolmwHostileLeaks documents what the adapter closes: on a
// bare mcp-go server the same shapes put the canary on the wire.
func TestWithoutToolmwHostileLeaks(t *testing.T) {
	s := server.NewMCPServer("bare", "1.0.0", server.WithOutputSchemaValidation())
	s.AddTool(mcp.NewTool("wire", hostileInput), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, elicitation(req.GetString("canary", ""))
	})
	s.AddTool(mcp.NewTool("typed", hostileInput), mcp.NewStructuredToolHandler(func(ctx context.Context, req mcp.CallToolRequest, a hostileArgs) (any, error) {
		return nil, errors.New("dial " + a.Canary)
	}))
	tool := mcp.NewTool("schema", hostileInput)
	tool.RawOutputSchema = json.RawMessage(hostileOutput)
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return structured(map[string]any{"v": req.GetString("canary", "")})
	})
	s.AddTool(mcp.NewTool("enc", hostileInput), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return structured(map[string]any{"v": marshalErr{req.GetString("canary", "")}})
	})
	w := &wire{name: "in-process-legacy"}
	w.client = client.NewClient(&captureTransport{Interface: transport.NewInProcessTransport(s), w: w}, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	initialize(t, w.client)
	defer w.client.Close()
	for _, tool := range []string{"wire", "typed", "schema", "enc"} {
		before := len(w.bytes())
		_, _ = call(t, w, tool, map[string]any{"shape": tool, "canary": "CANARY" + strings.ToUpper(tool)})
		assert.Contains(t, string(w.bytes()[before:]), "CANARY"+strings.ToUpper(tool), "%s leaks without toolmw", tool)
	}
}

// Invented shapes: the randomized generator composes the table's raw
// errors and values with wrappers and placements of its own.

// customWrap wraps an error with a message of its own.
type customWrap struct{ err error }

func (c *customWrap) Error() string { return "custom: " + c.err.Error() }
func (c *customWrap) Unwrap() error { return c.err }

// multiWrap wraps several errors.
type multiWrap struct{ errs []error }

func (m multiWrap) Error() string {
	var b strings.Builder
	for _, e := range m.errs {
		b.WriteString(e.Error() + "; ")
	}
	return b.String()
}
func (m multiWrap) Unwrap() []error { return m.errs }

// claimsAll says it is every error it is compared with (context.Canceled,
// server.ErrToolNotFound, ...).
type claimsAll struct{ err error }

func (c claimsAll) Error() string        { return c.err.Error() }
func (c claimsAll) Is(target error) bool { return true }

// wireWrap renders a wrapped error as its own JSON-RPC error.
type wireWrap struct{ err error }

func (w wireWrap) Error() string { return w.err.Error() }
func (w wireWrap) Unwrap() error { return w.err }
func (w wireWrap) JSONRPCError() mcp.JSONRPCError {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.JSONRPCErrorDetails{Code: mcp.INVALID_REQUEST, Message: w.err.Error(), Data: w.err.Error()}}
}

// stringer panics with a value that prints the canary.
type stringer struct{ s string }

func (s stringer) String() string { return "stringer " + s.s }

// boxed carries a value in a struct field (encoded through reflection).
type boxed struct {
	V any `json:"v"`
}

const numWrappers = 8

func wrapErr(err error, kind int) error {
	switch kind {
	case 0:
		return fmt.Errorf("op: %w", err)
	case 1:
		return errors.Join(errors.New("first"), err)
	case 2:
		return &customWrap{err}
	case 3:
		return multiWrap{[]error{io.EOF, err}}
	case 4:
		return errs.Unavailable("try later").WithCause(err)
	case 5:
		return claimsAll{err}
	case 6:
		return wireWrap{err}
	default:
		return fmt.Errorf("%v (was %w)", err, context.Canceled)
	}
}

// plan is one generated hostile call, sent as the arguments.
type plan struct {
	Shape  string `json:"shape"`
	Canary string `json:"canary"`
	Wraps  []int  `json:"wraps"`
	Panic  int    `json:"panic"` // 0 return, 1 panic(err), 2 panic(stringer)
	Depth  int    `json:"depth"`
	Place  int    `json:"place"` // 0 structured, 1 _meta, 2 content _meta, 3 struct field, 4 slice
}

func (p plan) err() error {
	err := shapeByName(p.Shape).err(p.Canary)
	for _, k := range p.Wraps {
		err = wrapErr(err, k)
	}
	switch p.Panic {
	case 1:
		panic(err)
	case 2:
		panic(stringer{err.Error()})
	}
	return err
}

func (p plan) value() any { return nested(shapeByName(p.Shape).val(p.Canary), p.Depth) }

func (p plan) native() (*mcp.CallToolResult, error) {
	sh := shapeByName(p.Shape)
	if sh.err != nil {
		return nil, p.err()
	}
	v := p.value()
	text := []mcp.Content{mcp.NewTextContent("ok")}
	switch p.Place {
	case 1:
		return &mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{"k": v}}}, Content: text}, nil
	case 2:
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "ok", Meta: &mcp.Meta{AdditionalFields: map[string]any{"k": v}}}}}, nil
	case 3:
		return structured(boxed{v})
	case 4:
		return structured([]any{"x", v})
	}
	return structured(v)
}

func (p plan) tm() *toolctx.CallResult {
	sh := shapeByName(p.Shape)
	if sh.err != nil {
		return toolctx.ErrorResult(p.err())
	}
	v := p.value()
	switch p.Place {
	case 1:
		return &toolctx.CallResult{Meta: map[string]any{"k": v}, Content: []toolctx.Content{&toolctx.Text{Text: "ok"}}}
	case 2:
		return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ok", Meta: map[string]any{"k": v}}}}
	case 3:
		return tmStructured(boxed{v})
	case 4:
		return tmStructured([]any{"x", v})
	}
	return tmStructured(v)
}

func (p plan) typed() (any, error) {
	sh := shapeByName(p.Shape)
	if sh.err != nil {
		return nil, p.err()
	}
	return boxed{p.value()}, nil
}

// randomServer serves the generated plans on native, toolmw, typed and
// interceptor tools.
func randomServer(t testing.TB, rec *recorder, validate bool) *server.MCPServer {
	replace := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if req.Tool != "r_mw" {
				return next.CallTool(ctx, req)
			}
			var p plan
			_ = json.Unmarshal(req.Arguments.JSON(), &p)
			return p.tm()
		})
	}
	chain := middleware.New(middleware.After(rec.after), middleware.Diagnostics(rec.diag), replace,
		middleware.Normalize(errs.Normalizer{}), middleware.Recover)
	opts := []server.ServerOption{mcpgo.ServerOption(chain.Middleware(), mcpgo.WithFallbackLogger(discardLogger()))}
	if validate {
		opts = append(opts, server.WithOutputSchemaValidation())
	}
	s := server.NewMCPServer("random", "1.0.0", opts...)
	bind := func(req mcp.CallToolRequest) plan {
		var p plan
		_ = req.BindArguments(&p)
		return p
	}
	s.AddTool(mcp.NewTool("r_native"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return bind(req).native()
	})
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("r_tm"), toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		var p plan
		_ = json.Unmarshal(req.Arguments.JSON(), &p)
		return p.tm()
	})))
	s.AddTool(mcp.NewTool("r_structured"), mcp.NewStructuredToolHandler(func(ctx context.Context, req mcp.CallToolRequest, p plan) (any, error) {
		return p.typed()
	}))
	s.AddTool(mcp.NewTool("r_helper"), mcpgo.StructuredHandler(func(ctx context.Context, req mcp.CallToolRequest, p plan) (any, error) {
		return p.typed()
	}))
	s.AddTool(mcp.NewTool("r_mw"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("not reached"), nil
	})
	s.AddTool(mcp.NewTool("ok"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello"), nil
	})
	return s
}

// TestHostileRandom sends generated hostile calls, concurrently, on every
// mcp-go transport: every call is answered (within the call's bound) with
// an isError result, no byte holds a canary or a stack, and the server
// still answers afterwards.
func TestHostileRandom(t *testing.T) {
	const calls = 240
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 12))
	var bases []string
	for _, sh := range shapes() {
		if (sh.err != nil || sh.val != nil) && !sh.schema {
			bases = append(bases, sh.name)
		}
	}
	tools := []string{"r_native", "r_tm", "r_structured", "r_helper", "r_mw"}
	rec := &recorder{}
	validate := rng.IntN(2) == 0
	for _, w := range allWires(t, func(t *testing.T) *server.MCPServer { return randomServer(t, rec, validate) }) {
		plans := make([]plan, calls)
		for i := range plans {
			p := plan{Shape: bases[rng.IntN(len(bases))], Canary: fmt.Sprintf("CANARY%016x", rng.Uint64()),
				Depth: rng.IntN(45), Place: rng.IntN(5)}
			for range rng.IntN(4) {
				p.Wraps = append(p.Wraps, rng.IntN(numWrappers))
			}
			if rng.IntN(4) == 0 {
				p.Panic = 1 + rng.IntN(2)
			}
			plans[i] = p
		}
		ch := make(chan int)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		for range 8 {
			wg.Go(func() {
				for i := range ch {
					p := plans[i]
					tool := tools[i%len(tools)]
					b, _ := json.Marshal(p)
					var args map[string]any
					_ = json.Unmarshal(b, &args)
					res, err := call(t, w, tool, args)
					if err != nil || !res.IsError {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("%s %s %s: %v %+v", w.name, tool, b, err, res))
						mu.Unlock()
					}
				}
			})
		}
		for i := range plans {
			ch <- i
		}
		close(ch)
		wg.Wait()
		assert.Empty(t, bad, "every hostile call is answered with an isError result")
		res, err := call(t, w, "ok", nil)
		require.NoError(t, err, w.name)
		assert.Equal(t, "hello", text(res), w.name)
		assertClean(t, w, "random")
	}
}

// errorPanics is an error whose methods panic with the canary.
type errorPanics struct {
	msg    string
	method string // "Error", "Is", "Unwrap"
}

func (e errorPanics) Error() string {
	if e.method == "Error" {
		panic("Error: " + e.msg)
	}
	return "error panics"
}

func (e errorPanics) Is(error) bool {
	if e.method == "Is" {
		panic("Is: " + e.msg)
	}
	return false
}

func (e errorPanics) Unwrap() error {
	if e.method == "Unwrap" {
		panic("Unwrap: " + e.msg)
	}
	return nil
}

// TestPanickingErrorMethods: errors whose Error, Is or Unwrap method panics
// (returned, or as a panic value), behind the full chain, behind an empty
// chain (the adapter normalizes) and from a toolmw handler on a server
// without the adapter, and an interceptor's Goexit on a call mcp-go
// rejected (the hooks run the chain): nothing reaches the client, and the
// server keeps answering on every transport.
func TestPanickingErrorMethods(t *testing.T) {
	type variant struct {
		name string
		opts func(rec *recorder) []server.ServerOption
	}
	ghost := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if req.Tool == "ghost" {
				runtime.Goexit()
			}
			return next.CallTool(ctx, req)
		})
	}
	variants := []variant{
		{"full chain", func(rec *recorder) []server.ServerOption {
			return []server.ServerOption{mcpgo.ServerOption(rec.hostileChain().Append(ghost).Middleware(), mcpgo.WithFallbackLogger(discardLogger()))}
		}},
		{"empty chain", func(rec *recorder) []server.ServerOption {
			return []server.ServerOption{mcpgo.ServerOption(ghost, mcpgo.WithFallbackLogger(discardLogger()))}
		}},
		{"no adapter", func(rec *recorder) []server.ServerOption { return nil }},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			rec := &recorder{}
			build := func(t *testing.T) *server.MCPServer {
				s := server.NewMCPServer("methods", "1.0.0", v.opts(rec)...)
				require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("tm", hostileInput), toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
					var a hostileArgs
					_ = json.Unmarshal(req.Arguments.JSON(), &a)
					method, how, _ := strings.Cut(a.Shape, "/")
					err := errorPanics{msg: a.Canary, method: method}
					if how == "panic" {
						panic(err)
					}
					return toolctx.ErrorResult(fmt.Errorf("wrapped: %w", err))
				})))
				s.AddTool(mcp.NewTool("native", hostileInput), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					method, how, _ := strings.Cut(req.GetString("shape", ""), "/")
					err := errorPanics{msg: req.GetString("canary", ""), method: method}
					if how == "panic" {
						panic(err)
					}
					return nil, err
				})
				s.AddTool(mcp.NewTool("ok"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText("hello"), nil
				})
				return s
			}
			for _, w := range allWires(t, build) {
				tools := []string{"tm"}
				if v.name != "no adapter" {
					tools = append(tools, "native")
				}
				for _, tool := range tools {
					for _, method := range []string{"Error", "Is", "Unwrap"} {
						for _, how := range []string{"return", "panic"} {
							res, err := call(t, w, tool, map[string]any{"shape": method + "/" + how, "canary": "CANARY-" + method + "-" + how})
							require.NoError(t, err, "%s %s %s %s", w.name, tool, method, how)
							assert.True(t, res.IsError, "%s %s %s %s", w.name, tool, method, how)
						}
					}
				}
				if v.name != "no adapter" {
					_, err := call(t, w, "ghost", nil)
					require.Error(t, err, w.name)
					assert.Contains(t, err.Error(), "not found", w.name)
				}
				res, err := call(t, w, "ok", nil)
				require.NoError(t, err, w.name)
				assert.Equal(t, "hello", text(res), "%s: the server still answers", w.name)
				assertClean(t, w, v.name)
			}
		})
	}
}

// TestSessionToolOutputValidated: a session's own tool shadows the server's
// tool of the same name (mcp-go looks up session tools first, and so does
// the adapter), so its output schema is the one checked inside the chain.
func TestSessionToolOutputValidated(t *testing.T) {
	rec := &recorder{}
	s := hostileServer(t, rec, true)
	w := sseWire(t, s) // in-process sessions have no tools of their own
	_, err := call(t, w, "ok", nil)
	require.NoError(t, err)
	_, _, reqs := rec.snapshot()
	require.Len(t, reqs, 1)
	id := reqs[0].SessionID
	require.NotEmpty(t, id, "the in-process session's id")
	rec.reset()
	tool := mcp.NewTool("n_plain", hostileInput)
	tool.RawOutputSchema = json.RawMessage(hostileOutput)
	require.NoError(t, s.AddSessionTool(id, tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return structured(map[string]any{"v": req.GetString("canary", "")})
	}))
	res, err := call(t, w, "n_plain", map[string]any{"shape": "schema_pattern", "canary": "CANARY-session"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, errs.GenericMessage, text(res))
	_, rows, _ := rec.snapshot()
	require.Len(t, rows, 1)
	assert.Contains(t, rows[0].Cause().Error(), "CANARY-session")
	assertClean(t, w, "session tool")
}
