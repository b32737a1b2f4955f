package mcpsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// TestLateResult: a raw error returned after the Timeout deadline or after
// the client cancelled is answered as a timeout or a cancellation, and the
// row keeps its raw message; a late success stays a timeout. On every
// transport, for native typed, native raw and toolmw handlers.
func TestLateResult(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			t.Parallel()
			f := tk.connect(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			caseID := 1000
			for _, tool := range []string{"slow_raw", "typed_slow_raw", "tm_slow_raw"} {
				caseID++
				c := caseID
				res, err := f.call(t, ctx, tool, failArgs{ID: c}, c)
				require.NoError(t, err, tool)
				require.True(t, res.IsError, tool)
				require.Equal(t, string(errs.CodeTimeout), errorMeta(t, res)["code"], tool)
				recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
				a := forCase(recs, "after", c)[0]
				require.Equal(t, string(errs.CodeTimeout), a.Code, tool)
				require.True(t, a.Scrubbed, "%s: a late raw error is scrubbed", tool)
				require.Contains(t, a.Raw, secretFor(c), "%s: the row keeps the late raw message", tool)
				require.Empty(t, forCase(recs, "diag", c), "%s: a timeout is no diagnostic", tool)
			}

			caseID++
			c := caseID
			res, err := f.call(t, ctx, "slow_ok", failArgs{ID: c}, c)
			require.NoError(t, err)
			require.Equal(t, string(errs.CodeTimeout), errorMeta(t, res)["code"], "a late success stays a timeout")
			recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
			require.Equal(t, string(errs.CodeTimeout), forCase(recs, "after", c)[0].Code)

			if tk.name != "http-stateless" { // the SDK does not deliver a cancellation there
				for _, tool := range []string{"block_raw", "tm_block_raw"} {
					caseID++
					c := caseID
					cctx, cancelCall := context.WithCancel(ctx)
					go func() {
						// Cancel once the handler runs: sooner, the
						// client might not have sent the call at all.
						f.awaitRecords(func(r []record) bool { return len(forCase(r, "entered", c)) == 1 })
						cancelCall()
					}()
					_, err := f.call(t, cctx, tool, failArgs{ID: c}, c)
					cancelCall()
					require.ErrorIs(t, err, context.Canceled, tool)
					recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
					a := forCase(recs, "after", c)[0]
					require.Equal(t, string(errs.CodeCanceled), a.Code, tool)
					require.True(t, a.Scrubbed, tool)
					require.Contains(t, a.Raw, secretFor(c), "%s: the row keeps the late raw message", tool)
					require.Empty(t, forCase(recs, "diag", c), tool)
				}
			}
			requireClean(t, f.received.bytes())
		})
	}
}

// TestGoexit: a runtime.Goexit in a native typed or raw handler, a toolmw
// handler, an interceptor or an SDK middleware ends that call as an
// internal failure; the server keeps answering, and the session closes
// (bounded waits: a hang fails the test).
func TestGoexit(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			t.Parallel()
			f := tk.connect(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i, tool := range failTools {
				for round := range 3 { // more Goexits than the SDK has workers anywhere
					c := 2000 + 10*i + round
					res, err := f.call(t, ctx, tool, failArgs{Shape: "goexit", ID: c}, c)
					require.NoError(t, err, tool)
					require.True(t, res.IsError, tool)
					require.Equal(t, errs.GenericMessage, text(res), tool)
					require.Equal(t, string(errs.CodeInternal), errorMeta(t, res)["code"], tool)
					recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 && len(forCase(r, "diag", c)) == 1 })
					a, d := forCase(recs, "after", c)[0], forCase(recs, "diag", c)[0]
					require.True(t, a.Scrubbed, "%s: the Goexit's row", tool)
					require.Equal(t, errs.NewPanicError(errs.ErrGoexit).Error(), a.Raw, "%s: the Goexit's row", tool)
					require.True(t, d.Stack, "%s: diagnostics get the Goexit's stack", tool)
					res, err = f.call(t, ctx, "typed", map[string]any{"n": 2}, -1)
					require.NoError(t, err, "%s: the server still answers", tool)
					require.JSONEq(t, `{"value":"4"}`, jsonOf(t, res.StructuredContent))
				}
			}
			requireClean(t, f.received.bytes())
			closed := make(chan error, 1)
			go func() { closed <- f.session.Close() }()
			select {
			case <-closed:
			case <-time.After(30 * time.Second):
				t.Fatal("the session did not close after Goexits")
			}
		})
	}
}

// TestURLElicitation: a handler's URL-elicitation-required error reaches the
// client as the protocol error, with only the protocol's fields of its
// elicitations and the SDK's fixed message; the row says
// failed_precondition.
func TestURLElicitation(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			t.Parallel()
			f := tk.connect(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i, tool := range []string{"elicit", "tm_elicit"} {
				c := 3000 + i
				_, err := f.call(t, ctx, tool, map[string]any{}, c)
				var we *jsonrpc.Error
				require.ErrorAs(t, err, &we, tool)
				require.Equal(t, int64(mcp.CodeURLElicitationRequired), we.Code, tool)
				require.Equal(t, "URL elicitation required", we.Message, tool)
				require.JSONEq(t, `{"elicitations":[{"mode":"url","message":"Sign in to continue","url":"https://example.com/login","elicitationId":"e1"}]}`,
					string(we.Data), tool)
				recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
				a := forCase(recs, "after", c)[0]
				require.Equal(t, string(errs.CodeFailedPrecondition), a.Code, tool)
				require.False(t, a.Scrubbed, tool)
				require.Empty(t, forCase(recs, "diag", c), tool)
			}
			requireClean(t, f.received.bytes())
		})
	}
}

// TestInterceptorUnencodable: an interceptor that replaces the result with
// one that cannot be encoded cannot hang the call: the client gets the
// generic failure, and the fallback logger the cause.
func TestInterceptorUnencodable(t *testing.T) {
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
	})
	replace := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			var in failArgs
			_ = json.Unmarshal(req.Arguments.JSON(), &in)
			res := next.CallTool(ctx, req)
			if r := hostileResult(in.Shape, secretFor(in.ID)); r != nil {
				return r
			}
			return res
		})
	}
	mcpsdk.Install(s, replace, mcpsdk.WithFallbackLogger(logger))
	cs := connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, shape := range encShapes {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: failArgs{Shape: shape, ID: i}})
		require.NoError(t, err, shape)
		require.True(t, res.IsError, shape)
		require.Equal(t, errs.GenericMessage, text(res), shape)
		require.NotContains(t, jsonOf(t, res), canary, shape)
	}
	require.Contains(t, logs.String(), "cannot be encoded")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: failArgs{}})
	require.NoError(t, err)
	require.Equal(t, "fine", text(res))
}

// TestAddToolWithoutInstallHostile: a toolmw tool on a server without the
// adapter's middleware: a nil result, a Goexit and a result that cannot be
// encoded are internal failures, and the server keeps answering.
func TestAddToolWithoutInstallHostile(t *testing.T) {
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
		toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			var in failArgs
			_ = json.Unmarshal(req.Arguments.JSON(), &in)
			doGoexit(in.Shape)
			if in.Shape == "nil_result" {
				return nil
			}
			if r := hostileResult(in.Shape, secretFor(in.ID)); r != nil {
				return r
			}
			return toolctx.TextResult("fine")
		}), mcpsdk.WithFallbackLogger(logger)))
	cs := connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, shape := range append([]string{"nil_result", "goexit", "goexit"}, encShapes...) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: failArgs{Shape: shape, ID: i}})
		require.NoError(t, err, shape)
		require.True(t, res.IsError, shape)
		require.Equal(t, errs.GenericMessage, text(res), shape)
		require.Equal(t, "internal", errorMeta(t, res)["code"], shape)
		require.NotContains(t, jsonOf(t, res), canary, shape)
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: failArgs{}})
		require.NoError(t, err, shape)
		require.Equal(t, "fine", text(res), shape)
	}
	require.True(t, strings.Contains(logs.String(), "Goexit"), "the Goexit is logged: %s", logs.String())
	require.False(t, errors.Is(ctx.Err(), context.DeadlineExceeded))
}

// TestEncodedOnce: a value whose MarshalJSON works once and panics the
// second time is delivered, from every kind of handler: the adapter hands
// the SDK the structured content and every _meta already encoded, so the
// SDK never calls it again (it would panic on the SDK's goroutine).
func TestEncodedOnce(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			t.Parallel()
			f := tk.connect(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i, tool := range []string{"sdk_typed_fail", "sdk_raw_fail", "tm_fail", "tm_out_enc"} {
				c := 4000 + i
				res, err := f.call(t, ctx, tool, failArgs{Shape: "enc_once", ID: c}, c)
				require.NoError(t, err, tool)
				require.False(t, res.IsError, "%s: %s", tool, text(res))
				require.Equal(t, "once", res.Meta["m"], tool)
				require.JSONEq(t, `{"m":"once"}`, jsonOf(t, res.StructuredContent), tool)
			}
			requireClean(t, f.received.bytes())
		})
	}
}
