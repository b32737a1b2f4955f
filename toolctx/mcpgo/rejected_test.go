package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/feedback"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// auditRows collects audit rows.
type auditRows struct {
	mu   sync.Mutex
	rows []audit.Record
}

func (a *auditRows) Emit(_ context.Context, r audit.Record) {
	a.mu.Lock()
	a.rows = append(a.rows, r)
	a.mu.Unlock()
}

func (a *auditRows) take() []audit.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.rows
	a.rows = nil
	return out
}

type exchange struct {
	body   []byte // the client's bytes for this call (JSON-RPC body)
	result *mcp.CallToolResult
	err    error
}

// do makes one call and returns what the client received for it.
func do(t *testing.T, w *wire, name string, args map[string]any) exchange {
	before := len(w.bodyBytes())
	res, err := call(t, w, name, args)
	return exchange{body: w.bodyBytes()[before:], result: res, err: err}
}

// TestRejectedBeforeMiddleware: an unknown tool and invalid arguments, which
// mcp-go rejects before any tool middleware, run through the chain once,
// with the right code and the public message, no diagnostics event, and the
// client's bytes exactly as mcp-go sends them without toolmw.
func TestRejectedBeforeMiddleware(t *testing.T) {
	cases := []struct {
		name string
		tool string
		args map[string]any
		code errs.Code
	}{
		{"unknown tool", "no_such_tool", map[string]any{"x": 1}, errs.CodeUnknownTool},
		{"unknown tool without arguments", "no_such_tool", nil, errs.CodeUnknownTool},
		{"wrong type", "strict", map[string]any{"n": "not a number"}, errs.CodeInvalidArguments},
		{"missing required", "strict", map[string]any{}, errs.CodeInvalidArguments},
		{"below minimum", "strict", map[string]any{"n": 0}, errs.CodeInvalidArguments},
		{"a toolmw tool's schema", "tm_fail", map[string]any{"kind": "x"}, errs.CodeInvalidArguments},
	}
	transports := map[string]func(*testing.T, *server.MCPServer) *wire{
		"in-process":      func(t *testing.T, s *server.MCPServer) *wire { return inProcessWire(t, s) },
		"streamable-http": func(t *testing.T, s *server.MCPServer) *wire { return httpWire(t, s, nil) },
	}
	for tname, mk := range transports {
		t.Run(tname, func(t *testing.T) {
			rec := &recorder{}
			rows := &auditRows{}
			chain := middleware.New(audit.Interceptor(rows)).Extend(rec.chain())
			with := mk(t, newServerWith(t, mcpgo.ServerOption(chain.Middleware()), server.WithInputSchemaValidation()))
			bare := mk(t, newServerWith(t, server.WithInputSchemaValidation()))
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					rec.reset()
					rows.take()
					want := do(t, bare, tc.tool, tc.args)
					got := do(t, with, tc.tool, tc.args)

					// The client's bytes are mcp-go's, unchanged, but for
					// invalid-arguments feedback, rephrased as sentences.
					require.NotEmpty(t, want.body)
					if tc.code == errs.CodeInvalidArguments {
						require.NotNil(t, want.result)
						require.NotNil(t, got.result)
						assert.Equal(t, "invalid arguments: "+feedback.MCPGo(text(want.result)), text(got.result), "rephrased")
						assert.NotContains(t, text(got.result), "&{", "no Go struct dump")
						w, g := *want.result, *got.result
						w.Content, g.Content = nil, nil
						// _meta gains the adapter's public error (below), and
						// keeps what mcp-go put there.
						var wm, gm map[string]any
						if w.Meta != nil {
							wm = w.Meta.AdditionalFields
						}
						if g.Meta != nil {
							gm = maps.Clone(g.Meta.AdditionalFields)
							delete(gm, toolctx.ErrorMetaKey)
						}
						assert.Equal(t, len(wm), len(gm), "mcp-go's own _meta keys kept")
						for k, v := range wm {
							assert.Equal(t, v, gm[k], "mcp-go's _meta[%q] kept", k)
						}
						w.Meta, g.Meta = nil, nil
						assert.Equal(t, w, g, "the rest of mcp-go's result, unchanged")
					} else {
						assert.Equal(t, string(want.body), string(got.body))
					}
					assert.Equal(t, want.err != nil, got.err != nil)
					if want.err != nil {
						assert.Equal(t, want.err.Error(), got.err.Error())
					}

					diags, infos, reqs := rec.snapshot()
					assert.Empty(t, diags, "an expected rejection calls no diagnostics hook")
					require.Len(t, infos, 1, "exactly one After record")
					o := infos[0].Outcome
					assert.True(t, o.Failed)
					assert.False(t, o.Scrubbed)
					assert.Equal(t, tc.code, o.Public.Code)
					assert.NoError(t, errors.Unwrap(infos[0].Cause()), "no raw cause behind the public rejection")

					var message string
					switch tc.code {
					case errs.CodeUnknownTool:
						require.Error(t, got.err)
						assert.Contains(t, got.err.Error(), "not found")
						message = `unknown tool "` + tc.tool + `"`
					case errs.CodeInvalidArguments:
						require.NoError(t, got.err)
						require.True(t, got.result.IsError)
						message = text(got.result)
						assert.Contains(t, message, "invalid arguments: ")
						problems := feedback.Detail(feedback.MCPGoProblems(text(want.result)))
						assert.Equal(t, problems, o.Public.Detail, "the problems as data")
						em := errorMeta(got.result)
						require.NotNil(t, em, "the client's result carries the public error, as go-sdk's does")
						assert.Equal(t, string(errs.CodeInvalidArguments), em["code"], "its code")
						assert.Equal(t, problems, em["detail"], "the client gets the problems as data, the row's detail")
					}
					assert.Equal(t, message, o.Public.Message)

					require.Len(t, reqs, 1)
					assert.Equal(t, tc.tool, reqs[0].Tool)
					assert.NotEmpty(t, reqs[0].CallID)
					if tc.args != nil {
						wantArgs, _ := json.Marshal(tc.args)
						assert.JSONEq(t, string(wantArgs), string(reqs[0].Arguments.JSON()))
					}
					if tname == "in-process" {
						assert.Equal(t, toolctx.TransportInMemory, reqs[0].Transport)
						assert.NotEmpty(t, reqs[0].SessionID)
					} else {
						assert.Equal(t, toolctx.TransportStreamableHTTP, reqs[0].Transport)
						assert.NotEmpty(t, reqs[0].Header.Get("Content-Type"))
					}

					ar := rows.take()
					require.Len(t, ar, 1, "exactly one audit row")
					assert.Equal(t, audit.OutcomeRejected, ar[0].Outcome)
					assert.Equal(t, tc.code, ar[0].Code)
					assert.Equal(t, message, ar[0].Message)
					assert.Equal(t, tc.tool, ar[0].Tool)
				})
			}
		})
	}
}

// TestReachedMiddlewareCountedOnce: calls that reach the tool middleware
// are not run again by the hooks, including a handler's own isError result
// worded like mcp-go's validation feedback and an output that fails its
// schema (which the adapter now fails inside the chain, so mcp-go's later
// check never sees it).
func TestReachedMiddlewareCountedOnce(t *testing.T) {
	rec := &recorder{}
	s := newServer(t, rec, server.WithOutputSchemaValidation())
	s.AddTool(mcp.NewTool("mimic"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("input schema validation failed: /n: made up by the handler"), nil
	})
	s.AddTool(mcp.NewTool("bad_output", mcp.WithOutputSchema[struct {
		N int `json:"n"`
	}]()), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("x")}, StructuredContent: map[string]any{"n": "not a number"}}, nil
	})
	for name, w := range map[string]*wire{"in-process": inProcessWire(t, s), "streamable-http": httpWire(t, s, nil)} {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				tool string
				args map[string]any
				code errs.Code
			}{
				{"ok", nil, ""},
				{"strict", map[string]any{"n": 2}, ""},
				{"mimic", nil, errs.CodeToolError},
				{"bad_output", nil, errs.CodeInternal},
				{"own_error", nil, errs.CodeToolError},
				{"fail_a", map[string]any{"kind": 0, "canary": "c"}, errs.CodeInternal},
				{"guarded", nil, errs.CodePermissionDenied},
			} {
				rec.reset()
				res, err := call(t, w, tc.tool, tc.args)
				require.NoError(t, err, tc.tool)
				if tc.tool == "bad_output" {
					// Failed inside the chain: the generic message, not
					// mcp-go's text quoting the value.
					assert.True(t, res.IsError)
					assert.Equal(t, errs.GenericMessage, text(res))
				}
				_, infos, _ := rec.snapshot()
				require.Len(t, infos, 1, tc.tool)
				assert.Equal(t, tc.code, infos[0].Outcome.Public.Code, tc.tool)
			}
		})
	}
}

// TestRejectedChainResultDiscarded: whatever the chain returns for a
// rejected call, the client gets mcp-go's answer; a panic in the chain is
// contained and reported to the adapter's logger.
func TestRejectedChainResultDiscarded(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))
	replace := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if req.Tool == "panic_tool" {
				panic("CANARY-in-the-chain")
			}
			return toolctx.TextResult("REPLACED")
		})
	}
	s := newServerWith(t, mcpgo.ServerOption(replace, mcpgo.WithFallbackLogger(logger)), server.WithInputSchemaValidation())
	w := inProcessWire(t, s)

	_, err := call(t, w, "no_such_tool", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not found")
	res, err := call(t, w, "strict", map[string]any{"n": "x"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "invalid arguments: n: expected a number, got a string")
	_, err = call(t, w, "panic_tool", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not found")
	// The server is still up, and calls that reach the middleware get the
	// chain's result.
	res, err = call(t, w, "ok", nil)
	require.NoError(t, err)
	assert.Equal(t, "REPLACED", text(res))
	assert.NotContains(t, string(w.bytes()), "CANARY")
	mu.Lock()
	assert.Contains(t, logged.String(), "CANARY-in-the-chain")
	mu.Unlock()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestHooksWiring: ServerOption keeps hooks given before it and acts only
// on its own server when they are shared; AddHooks serves a server that
// installs the middleware itself and sets its hooks after.
func TestHooksWiring(t *testing.T) {
	t.Run("shared hooks given before ServerOption", func(t *testing.T) {
		var userErrors int
		var mu sync.Mutex
		shared := &server.Hooks{}
		shared.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, message any, err error) {
			mu.Lock()
			userErrors++
			mu.Unlock()
		})
		recA, recB := &recorder{}, &recorder{}
		a := newServerWith(t, server.WithHooks(shared), mcpgo.ServerOption(recA.chain().Middleware()), server.WithInputSchemaValidation())
		b := newServerWith(t, server.WithHooks(shared), mcpgo.ServerOption(recB.chain().Middleware()), server.WithInputSchemaValidation())
		require.Same(t, shared, a.GetHooks())
		require.Same(t, shared, b.GetHooks())
		wa, wb := inProcessWire(t, a), inProcessWire(t, b)

		_, err := call(t, wa, "no_such_tool", nil)
		require.Error(t, err)
		_, rowsA, _ := recA.snapshot()
		_, rowsB, _ := recB.snapshot()
		require.Len(t, rowsA, 1)
		assert.Equal(t, errs.CodeUnknownTool, rowsA[0].Outcome.Public.Code)
		assert.Empty(t, rowsB, "the other server's chain does not run")

		res, err := call(t, wb, "strict", nil)
		require.NoError(t, err)
		assert.True(t, res.IsError)
		_, rowsA, _ = recA.snapshot()
		_, rowsB, _ = recB.snapshot()
		assert.Len(t, rowsA, 1)
		require.Len(t, rowsB, 1)
		assert.Equal(t, errs.CodeInvalidArguments, rowsB[0].Outcome.Public.Code)
		mu.Lock()
		assert.Equal(t, 1, userErrors, "the user's own hook still runs")
		mu.Unlock()
	})

	t.Run("AddHooks with Middleware and WithHooks after", func(t *testing.T) {
		rec := &recorder{}
		hooks := &server.Hooks{}
		mcpgo.AddHooks(hooks, rec.chain().Middleware())
		mcpgo.AddHooks(nil, rec.chain().Middleware()) // a no-op
		s := newServerWith(t,
			server.WithToolHandlerMiddleware(mcpgo.Middleware(rec.chain().Middleware())),
			server.WithHooks(hooks),
			server.WithInputSchemaValidation(),
		)
		w := httpWire(t, s, nil)
		for _, tc := range []struct {
			tool string
			args map[string]any
			code errs.Code
		}{
			{"no_such_tool", nil, errs.CodeUnknownTool},
			{"strict", map[string]any{"n": -1}, errs.CodeInvalidArguments},
			{"own_error", nil, errs.CodeToolError},
			{"ok", nil, ""},
		} {
			rec.reset()
			_, _ = call(t, w, tc.tool, tc.args)
			diags, rows, _ := rec.snapshot()
			assert.Empty(t, diags)
			require.Len(t, rows, 1, tc.tool)
			assert.Equal(t, tc.code, rows[0].Outcome.Public.Code, tc.tool)
		}
	})

	t.Run("WithHooks after ServerOption drops the adapter's hooks", func(t *testing.T) {
		// Documented: the rejected calls then get no record (as before);
		// the calls that reach the middleware are unaffected.
		rec := &recorder{}
		s := newServerWith(t, mcpgo.ServerOption(rec.chain().Middleware()), server.WithHooks(&server.Hooks{}))
		w := inProcessWire(t, s)
		_, err := call(t, w, "no_such_tool", nil)
		require.Error(t, err)
		_, rows, _ := rec.snapshot()
		assert.Empty(t, rows)
		_, err = call(t, w, "ok", nil)
		require.NoError(t, err)
		_, rows, _ = rec.snapshot()
		assert.Len(t, rows, 1)
	})
}
