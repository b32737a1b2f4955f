package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
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

	outcome audit.Outcome
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
		Tool: "lookup", CallID: toolctx.NewCallID(), RequestID: "req-1", SessionID: "sess-1",
		Transport: toolctx.TransportStreamableHTTP, Identity: &toolctx.Identity{Subject: "alice", Scopes: []string{"read"}},
		Arguments: json.RawMessage(`{"password":"` + canary + `","q":"x"}`),
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
	e := audit.EmitterFunc(func(context.Context, audit.Record) { panic("sink exploded") })
	var logged strings.Builder
	h, err := middleware.New(audit.Interceptor(e, audit.WithHookOptions(middleware.WithFallbackLogger(discardLogger(&logged)))), middleware.Recover).
		ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("fine") })
	require.NoError(t, err)
	res := h.CallTool(context.Background(), newReq())
	require.False(t, res.IsError)
	assert.Contains(t, logged.String(), "sink exploded")
}

func TestOutcomesClosedSet(t *testing.T) {
	for _, o := range audit.Outcomes() {
		assert.True(t, o.Valid(), o)
	}
	assert.False(t, audit.Outcome("weird").Valid())
}

// TestClientMetaThroughAsync checks the rows whose _meta the Async writer,
// not the call, copies: the client's own keys only, in a copy of the
// request's map; none with WithoutClientMeta; and the same for a row that
// reaches the fallback after Close.
func TestClientMetaThroughAsync(t *testing.T) {
	for _, noMeta := range []bool{false, true} {
		t.Run(fmt.Sprintf("without-client-meta=%v", noMeta), func(t *testing.T) {
			sink, fallback := &memSink{}, &memSink{}
			w := audit.NewAsync(sink, audit.AsyncConfig{Fallback: fallback, Logger: discardLogger(nil)})
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
