package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
	"github.com/toolmw/toolmw/toolmwtest/shapes"
)

// canary is a raw message that must reach the row only where the caller's
// message was scrubbed.
const canary = "CANARY dial tcp 10.1.2.3:5432: password authentication failed for user=svc"

// capture is an Emitter that keeps every row.
type capture struct {
	mu   sync.Mutex
	rows []audit.Record
}

func (c *capture) Emit(_ context.Context, r audit.Record) {
	c.mu.Lock()
	c.rows = append(c.rows, r)
	c.mu.Unlock()
}

func (c *capture) all() []audit.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]audit.Record(nil), c.rows...)
}

type rowCase struct {
	name    string
	guard   toolctx.Middleware // inside the interceptor, before the handler
	handler toolctx.HandlerFunc
	ctx     func() (context.Context, context.CancelFunc)
	timeout time.Duration

	outcome audit.RowOutcome
	code    errs.Code
	message string // exact
	raw     bool   // the canary must be in the row
}

func behaviourTable() []rowCase {
	return []rowCase{
		{
			name:    "success",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok " + canary) },
			outcome: audit.OutcomeOK,
		},
		{
			name: "invalid arguments",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errs.InvalidArguments("count: must be an integer").WithCause(errors.New(canary)))
			},
			outcome: audit.OutcomeRejected, code: errs.CodeInvalidArguments, message: "count: must be an integer",
		},
		{
			name: "explicit public error with a private cause",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errs.NotFound("no such invoice").WithCause(errors.New(canary)))
			},
			outcome: audit.OutcomeError, code: errs.CodeNotFound, message: "no such invoice",
		},
		{
			name: "handler's own isError result",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "the printer is out of paper"}}}
			},
			outcome: audit.OutcomeError, code: errs.CodeToolError, message: "the printer is out of paper",
		},
		{
			name: "raw error",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errors.New(canary))
			},
			outcome: audit.OutcomeError, code: errs.CodeInternal, message: canary, raw: true,
		},
		{
			name: "wrapped raw error",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errors.Join(errors.New("query invoices"), errors.New(canary)))
			},
			outcome: audit.OutcomeError, code: errs.CodeInternal, message: "query invoices\n" + canary, raw: true,
		},
		{
			name:    "panic",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult { panic(canary) },
			outcome: audit.OutcomePanic, code: errs.CodeInternal, message: "panic: " + canary, raw: true,
		},
		{
			name: "panic with an *errs.Error value is still scrubbed",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				panic(errs.NotFound("public").WithCause(errors.New(canary)))
			},
			outcome: audit.OutcomePanic, code: errs.CodeInternal, message: "panic: not_found: public: " + canary, raw: true,
		},
		{
			name: "output that cannot be encoded",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.StructuredResult(map[string]any{"f": func() {}})
			},
			outcome: audit.OutcomeError, code: errs.CodeInternal,
			message: "encode structured result: json: unsupported type: func()",
		},
		{
			name: "nil result",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return nil
			},
			outcome: audit.OutcomeError, code: errs.CodeInternal, message: toolctx.ErrNilResult.Error(),
		},
		{
			name: "guard rejects",
			guard: func(next toolctx.Handler) toolctx.Handler {
				return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
					return toolctx.ErrorResult(errs.RateLimited("slow down").WithCause(errors.New(canary)))
				})
			},
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("never") },
			outcome: audit.OutcomeRejected, code: errs.CodeRateLimited, message: "slow down",
		},
		{
			name: "guard rejects on scope",
			guard: func(next toolctx.Handler) toolctx.Handler {
				return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
					return toolctx.ErrorResult(errs.PermissionDenied("needs scope invoices:write"))
				})
			},
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("never") },
			outcome: audit.OutcomeRejected, code: errs.CodePermissionDenied, message: "needs scope invoices:write",
		},
		{
			name: "unknown tool",
			handler: func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errs.UnknownTool(req.Tool))
			},
			outcome: audit.OutcomeRejected, code: errs.CodeUnknownTool, message: `unknown tool "lookup"`,
		},
		{
			name: "client cancelled",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errors.Join(errors.New(canary), ctx.Err()))
			},
			outcome: audit.OutcomeCanceled, code: errs.CodeCanceled, message: errs.CodeCanceled.DefaultMessage(),
		},
		{
			name: "raw error after the client cancelled",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errors.New(canary))
			},
			// The caller is told "canceled"; the row names the cause.
			outcome: audit.OutcomeCanceled, code: errs.CodeCanceled, message: canary, raw: true,
		},
		{
			name: "raw error after the caller's deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			},
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errors.New(canary))
			},
			outcome: audit.OutcomeTimeout, code: errs.CodeTimeout, message: canary, raw: true,
		},
		{
			name:    "deadline in the chain",
			timeout: 5 * time.Millisecond,
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				<-ctx.Done()
				return toolctx.ErrorResult(errors.New(canary))
			},
			// The caller is told "timed out after 5ms"; the row names the cause.
			outcome: audit.OutcomeTimeout, code: errs.CodeTimeout, message: canary, raw: true,
		},
		{
			name:    "late success in the chain's deadline",
			timeout: 5 * time.Millisecond,
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				<-ctx.Done()
				return toolctx.TextResult(canary)
			},
			outcome: audit.OutcomeTimeout, code: errs.CodeTimeout, message: "the tool call timed out after 5ms",
		},
		{
			name:    "panic after the chain's deadline",
			timeout: 5 * time.Millisecond,
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				<-ctx.Done()
				panic(canary)
			},
			outcome: audit.OutcomePanic, code: errs.CodeInternal, message: "panic: " + canary, raw: true,
		},
		{
			name: "raw error whose Error panics",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(fmt.Errorf("query: %w", shapes.ErrorPanics{Secret: canary}))
			},
			outcome: audit.OutcomeError, code: errs.CodeInternal, raw: true,
			message: "query: %!v(PANIC=Error method: Error exploded: " + canary + ") wrapping [!(shapes.ErrorPanics: rendering it panicked: Error exploded: " + canary + ")]",
		},
		{
			name: "panic with an error whose Error panics",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				panic(shapes.ErrorPanics{Secret: canary})
			},
			outcome: audit.OutcomePanic, code: errs.CodeInternal, raw: true,
			message: "panic: !(shapes.ErrorPanics: rendering it panicked: Error exploded: " + canary + ")",
		},
		{
			name: "panic with a Stringer whose String panics",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				panic(shapes.StringPanics{Secret: canary})
			},
			outcome: audit.OutcomePanic, code: errs.CodeInternal, raw: true,
			message: "panic: !(shapes.StringPanics: rendering it panicked: String exploded: " + canary + ")",
		},
		{
			name: "raw error that is a typed nil",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				var e *shapes.CustomError
				return toolctx.ErrorResult(e)
			},
			outcome: audit.OutcomeError, code: errs.CodeInternal,
			message: "!(*shapes.CustomError: nil pointer; rendering it panicked)",
		},
		{
			name: "raw error wrapping context.Canceled while the call is live",
			handler: func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(fmt.Errorf("%s: %w", canary, context.Canceled))
			},
			// Nothing ended the call: a raw failure, its text in the row.
			outcome: audit.OutcomeError, code: errs.CodeInternal, message: canary + ": context canceled", raw: true,
		},
		{
			name:    "explicit public error after the chain's deadline",
			timeout: 5 * time.Millisecond,
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				<-ctx.Done()
				return toolctx.ErrorResult(errs.NotFound("no such invoice").WithCause(errors.New(canary)))
			},
			// The caller is told "timed out"; the row keeps the handler's own public error too.
			outcome: audit.OutcomeTimeout, code: errs.CodeTimeout,
			message: "the tool call timed out after 5ms; after the deadline the handler returned not_found: no such invoice",
		},
		{
			name:    "handler's own isError result after the chain's deadline",
			timeout: 5 * time.Millisecond,
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				<-ctx.Done()
				return &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "the printer is out of paper"}}}
			},
			outcome: audit.OutcomeTimeout, code: errs.CodeTimeout,
			message: "the tool call timed out after 5ms; after the deadline the handler returned tool_error: the printer is out of paper",
		},
		{
			name: "caller's deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Nanosecond)
			},
			handler: func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				<-ctx.Done()
				return toolctx.ErrorResult(ctx.Err())
			},
			outcome: audit.OutcomeTimeout, code: errs.CodeTimeout, message: errs.CodeTimeout.DefaultMessage(),
		},
	}
}

func newReq() *toolctx.Request {
	return &toolctx.Request{
		Tool: "lookup", CallID: adapter.NewCallID(), RequestID: "req-1", SessionID: "sess-1",
		Transport: toolctx.TransportStreamableHTTP, Identity: &toolctx.Identity{Subject: "alice", Scopes: []string{"read"}},
		Arguments: toolctx.RawArguments(json.RawMessage(`{"password":"` + canary + `","q":"x"}`)),
		Header:    map[string][]string{"Authorization": {"Bearer " + canary}},
		Meta: map[string]any{
			"io.modelcontextprotocol/progressToken": "p1",
			"io.modelcontextprotocol/related":       map[string]any{"x": 1},
			"traceparent":                           "00-abc-01",
		},
	}
}

func assertNoStack(t *testing.T, r audit.Record) {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	for _, s := range []string{"goroutine ", "runtime/debug", ".go:", "Bearer"} {
		assert.NotContains(t, string(b), s, "the row holds a stack or a credential")
	}
}

// TestRowsBehaviourTable checks the row of every situation in DESIGN.md's
// behaviour table, with and without Normalize in the chain, and with and
// without Recover (the interceptor catches a panic itself when Recover is
// not inside it).
func TestRowsBehaviourTable(t *testing.T) {
	for _, withNormalize := range []bool{false, true} {
		for _, withRecover := range []bool{true, false} {
			for _, tc := range behaviourTable() {
				name := tc.name
				if withNormalize {
					name += "/normalize"
				}
				if !withRecover {
					name += "/no-recover"
				}
				t.Run(name, func(t *testing.T) {
					var c capture
					ms := []toolctx.Middleware{audit.Interceptor(&c)}
					if tc.timeout > 0 {
						ms = append(ms, middleware.Timeout(tc.timeout))
					}
					if withNormalize {
						ms = append(ms, middleware.Normalize(errs.Normalizer{}))
					}
					if withRecover {
						ms = append(ms, middleware.Recover)
					}
					if tc.guard != nil {
						ms = append(ms, tc.guard)
					}
					h, err := middleware.New(ms...).Then(tc.handler)
					require.NoError(t, err)
					ctx := context.Background()
					if tc.ctx != nil {
						var cancel context.CancelFunc
						ctx, cancel = tc.ctx()
						defer cancel()
					}
					req := newReq()
					panicked := func() (p bool) {
						defer func() { p = recover() != nil }()
						h.CallTool(ctx, req)
						return false
					}()
					assert.Equal(t, !withRecover && tc.outcome == audit.OutcomePanic, panicked)

					rows := c.all()
					require.Len(t, rows, 1)
					r := rows[0]
					assert.Equal(t, audit.KindTool, r.Kind)
					assert.Equal(t, req.CallID, r.CallID)
					assert.Equal(t, "req-1", r.RequestID)
					assert.Equal(t, "sess-1", r.SessionID)
					assert.Equal(t, "streamable-http", r.Transport)
					assert.Equal(t, "lookup", r.Tool)
					assert.Equal(t, "alice", r.Subject)
					assert.Equal(t, tc.outcome, r.Outcome)
					assert.Equal(t, tc.code, r.Code)
					assert.Equal(t, tc.message, r.Message)
					assert.False(t, r.Time.IsZero())
					assert.GreaterOrEqual(t, r.Duration, time.Duration(0))
					assert.Equal(t, map[string]any{"traceparent": "00-abc-01"}, r.ClientMeta, "protocol _meta keys stay out")
					assert.Nil(t, r.Arguments, "no arguments without a redactor")
					if tc.raw {
						assert.Contains(t, r.Message, canary)
					} else {
						assert.NotContains(t, r.Message, canary, "the raw message is only for scrubbed errors")
					}
					assertNoStack(t, r)
				})
			}
		}
	}
}

func TestArgumentsOnlyWithRedactor(t *testing.T) {
	var c capture
	redact := func(tool string, args json.RawMessage) json.RawMessage {
		var m map[string]any
		if json.Unmarshal(args, &m) != nil {
			return nil
		}
		delete(m, "password")
		b, _ := json.Marshal(m)
		return b
	}
	h, err := middleware.New(audit.Interceptor(&c, audit.WithArguments(redact), audit.WithoutClientMeta())).
		ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	require.NoError(t, err)
	h.CallTool(context.Background(), newReq())
	rows := c.all()
	require.Len(t, rows, 1)
	assert.JSONEq(t, `{"q":"x"}`, string(rows[0].Arguments))
	assert.Nil(t, rows[0].ClientMeta)
}

func TestPanickingEmitterDoesNotFailTheCall(t *testing.T) {
	for name, e := range map[string]audit.Emitter{
		"panicking emitter":            audit.EmitterFunc(func(context.Context, audit.Record) { panic("sink exploded") }),
		"emitter panicking oddly":      audit.EmitterFunc(func(context.Context, audit.Record) { panic(shapes.ErrorPanics{Secret: "sink exploded"}) }),
		"Direct over a panicking sink": audit.Direct(audit.SinkFunc(func(context.Context, []audit.Record) error { panic("sink exploded") }), audit.DirectConfig{}),
	} {
		var logged syncbuf.Buffer
		fallback := discardLogger(&logged)
		opts := []audit.Option{audit.WithFallbackLogger(fallback)}
		if strings.HasPrefix(name, "Direct") {
			e = audit.Direct(audit.SinkFunc(func(context.Context, []audit.Record) error { panic("sink exploded") }), audit.DirectConfig{FallbackLogger: fallback})
		}
		h, err := middleware.New(audit.Interceptor(e, opts...), middleware.Normalize(errs.Normalizer{}), middleware.Recover).
			ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errors.New(canary))
			})
		require.NoError(t, err, name)
		req := newReq()
		res := h.CallTool(context.Background(), req)
		require.True(t, res.IsError, "%s: the call's result is unchanged", name)
		assert.Equal(t, errs.GenericMessage, res.Error.Message, "%s: the call's result is unchanged", name)
		out := logged.String()
		assert.Contains(t, out, "sink exploded", "%s: the panic is logged", name)
		assert.Contains(t, out, "call_id="+req.CallID, "%s: with the call id", name)
		assert.Contains(t, out, "row.message=", "%s: and the row itself, not lost", name)
		assert.Contains(t, out, "row.outcome=error", "%s: the whole row", name)
		assert.Equal(t, 1, strings.Count(out, "row.call_id="+req.CallID), "%s: once", name)
	}
}

func TestDirectFailingSinkLogsTheRow(t *testing.T) {
	var logged syncbuf.Buffer
	e := audit.Direct(audit.SinkFunc(func(context.Context, []audit.Record) error { return errors.New("collector: connection refused") }), audit.DirectConfig{FallbackLogger: discardLogger(&logged)})
	e.Emit(context.Background(), audit.Record{Kind: audit.KindTool, CallID: "call-7", Outcome: audit.OutcomeOK})
	assert.Contains(t, logged.String(), "collector: connection refused", "the error")
	assert.Contains(t, logged.String(), "call_id=call-7", "the call id")
	assert.Contains(t, logged.String(), "row.kind=tool", "the row")

	// Used on its own (by audit.HTTP, say), Direct does not let a
	// panicking sink lose the row either.
	logged = syncbuf.Buffer{}
	e = audit.Direct(audit.SinkFunc(func(context.Context, []audit.Record) error { panic(shapes.ErrorPanics{Secret: "disk gone"}) }), audit.DirectConfig{FallbackLogger: discardLogger(&logged)})
	require.NotPanics(t, func() {
		e.Emit(context.Background(), audit.Record{Kind: audit.KindHTTP, CallID: "call-8", Outcome: audit.OutcomeOK, Status: 200})
	}, "a panicking sink is contained")
	assert.Contains(t, logged.String(), "sink panicked", "the panic is logged")
	assert.Contains(t, logged.String(), "disk gone", "with its value")
	assert.Contains(t, logged.String(), "call_id=call-8", "the call id")
	assert.Contains(t, logged.String(), "row.status=200", "and the row")
}

func TestPanickingRedactorKeepsTheRow(t *testing.T) {
	var c capture
	var logged syncbuf.Buffer
	redact := func(string, json.RawMessage) json.RawMessage { panic("redactor exploded") }
	h, err := middleware.New(audit.Interceptor(&c, audit.WithArguments(redact), audit.WithFallbackLogger(discardLogger(&logged)))).
		ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	require.NoError(t, err)
	req := newReq()
	h.CallTool(context.Background(), req)
	rows := c.all()
	require.Len(t, rows, 1, "the row is written")
	assert.Nil(t, rows[0].Arguments, "without arguments")
	assert.Contains(t, logged.String(), "redactor exploded", "the redactor's panic is logged")
	assert.Contains(t, logged.String(), "call_id="+req.CallID, "with the call id")
}

// TestRowsForHostileShapes runs every fixed and many random hostile
// failure shapes (errors whose methods panic, cycles, typed nils, huge
// messages, Formatters...) through the audit interceptor: every call gets
// exactly one row, which names the cause where the caller's message was
// scrubbed, and never holds a stack.
func TestRowsForHostileShapes(t *testing.T) {
	r := rand.New(rand.NewSource(20261201))
	canary := shapes.NewCanary(r)
	cases := shapes.Fixed(canary)
	n := 1500
	if testing.Short() {
		n = 150
	}
	for range n {
		cases = append(cases, shapes.Random(r, canary))
	}
	var logged syncbuf.Buffer
	for i, sc := range cases {
		var c capture
		h, err := middleware.New(
			audit.Interceptor(&c, audit.WithFallbackLogger(discardLogger(&logged))),
			middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
		).Then(sc.Handler)
		require.NoError(t, err)
		var res *toolctx.CallResult
		require.NotPanics(t, func() { res = h.CallTool(context.Background(), newReq()) }, "#%d %s", i, sc.Name)
		rows := c.all()
		require.Len(t, rows, 1, "#%d %s: one row", i, sc.Name)
		row := rows[0]
		assert.NotContains(t, res.Error.Message, shapes.Prefix, "#%d %s: the caller's message", i, sc.Name)
		if res.Scrubbed() {
			want := audit.OutcomeError
			switch {
			case errs.PanicOf(res.Cause()) != nil:
				want = audit.OutcomePanic
			case res.Error.Code == errs.CodeCanceled:
				want = audit.OutcomeCanceled
			}
			assert.Equal(t, want, row.Outcome, "#%d %s: outcome", i, sc.Name)
			if !sc.Opaque {
				assert.Contains(t, row.Message, canary, "#%d %s: the row names the cause", i, sc.Name)
			}
		} else {
			assert.Equal(t, res.Error.Message, row.Message, "#%d %s: a public failure's row has its public message", i, sc.Name)
		}
		assert.NotContains(t, row.Message, "goroutine ", "#%d %s: no stack in the row", i, sc.Name)
		if t.Failed() {
			return
		}
	}
	assert.Empty(t, logged.String(), "no hook fault")
}

func TestOutcomesClosedSet(t *testing.T) {
	for _, o := range audit.Outcomes() {
		assert.True(t, o.Valid(), o)
	}
	assert.False(t, audit.RowOutcome("weird").Valid())
}

// TestClientMetaThroughAsync checks the rows' _meta through an Async: the
// client's own keys only, in a copy of the request's map; none with
// WithoutClientMeta; and the same for a row that reaches the fallback after
// Close (under Block).
func TestClientMetaThroughAsync(t *testing.T) {
	for _, noMeta := range []bool{false, true} {
		t.Run(fmt.Sprintf("without-client-meta=%v", noMeta), func(t *testing.T) {
			sink, fallback := &memSink{}, &memSink{}
			w := audit.NewAsync(sink, audit.AsyncConfig{Policy: audit.Block, Fallback: fallback, FallbackLogger: discardLogger(nil)})
			var opts []audit.Option
			if noMeta {
				opts = append(opts, audit.WithoutClientMeta())
			}
			h, err := middleware.New(audit.Interceptor(w, opts...)).
				ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
			require.NoError(t, err)
			req := newReq()
			h.CallTool(context.Background(), req)
			require.NoError(t, w.Close(context.Background()))
			h.CallTool(context.Background(), req) // after Close: straight to the fallback

			require.Len(t, sink.rows, 1, "one row written")
			require.Len(t, fallback.rows, 1, "the late row went to the fallback")
			for _, r := range []audit.Record{sink.rows[0], fallback.rows[0]} {
				if noMeta {
					assert.Nil(t, r.ClientMeta, "no _meta in the row")
					continue
				}
				require.Equal(t, map[string]any{"traceparent": "00-abc-01"}, r.ClientMeta, "the client's own keys, without the protocol's")
				r.ClientMeta["traceparent"] = "changed"
				assert.Equal(t, "00-abc-01", req.Meta["traceparent"], "the row holds a copy, not the request's map")
				r.ClientMeta["traceparent"] = "00-abc-01"
			}
			assert.Equal(t, sink.rows[0].CallID, req.CallID, "the row is the call's")
		})
	}
}

func TestNilEmitterOrSinkFailsAtConstruction(t *testing.T) {
	assert.PanicsWithValue(t, "audit.Interceptor: the emitter is nil", func() { audit.Interceptor(nil) }, "a nil emitter")
	assert.PanicsWithValue(t, "audit.Direct: the sink is nil", func() { audit.Direct(nil, audit.DirectConfig{}) }, "a nil sink")
}
