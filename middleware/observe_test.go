package middleware_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// observeCase is a guard set up to stop one call: before the handler
// (reject) or after it (change its result).
type observeCase struct {
	name  string
	guard func() toolctx.Middleware
	req   *toolctx.Request
	// result is what the handler returns.
	result func() *toolctx.CallResult
	// enforced checks the call's result without observe mode.
	enforced func(t *testing.T, res *toolctx.CallResult)
	// would are the "would_" notes observe mode keeps, besides
	// would_reject.
	would []toolctx.Note
}

const secret = "AKIAABCDEFGHIJKLMNOP"

func observeCases() []observeCase {
	text := func(s string) func() *toolctx.CallResult {
		return func() *toolctx.CallResult { return toolctx.TextResult(s) }
	}
	code := func(c errs.Code) func(t *testing.T, res *toolctx.CallResult) {
		return func(t *testing.T, res *toolctx.CallResult) {
			require.True(t, res.Failed(), "enforced: a rejection")
			var pub *errs.Error
			require.ErrorAs(t, res.Cause(), &pub)
			assert.Equal(t, c, pub.Code())
		}
	}
	big := strings.Repeat("x", 2000)
	return []observeCase{
		{name: "rate_limit",
			guard: func() toolctx.Middleware {
				return middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1, Key: middleware.ToolKey})
			},
			req: &toolctx.Request{Tool: "t"}, result: text("ok"), enforced: code(errs.CodeRateLimited)},
		{name: "bulkhead",
			guard: func() toolctx.Middleware {
				return middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1}) // MaxWait: TestObserveBulkheadNeverWaits
			},
			req: &toolctx.Request{Tool: "t"}, result: text("ok"), enforced: code(errs.CodeUnavailable)},
		{name: "max_arg_bytes",
			guard: func() toolctx.Middleware { return middleware.MaxArgBytes(8) },
			req:   &toolctx.Request{Tool: "t", Arguments: toolctx.RawArguments([]byte(`{"a":"0123456789"}`))}, result: text("ok"),
			enforced: code(errs.CodeInvalidArguments)},
		{name: "require_scopes",
			guard: func() toolctx.Middleware {
				return middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"t": {"admin"}}})
			},
			req: &toolctx.Request{Tool: "t", Identity: &toolctx.Identity{Subject: "u"}}, result: text("ok"),
			enforced: code(errs.CodePermissionDenied)},
		{name: "max_result_bytes",
			guard: func() toolctx.Middleware { return middleware.MaxResultBytes(1000, middleware.ResultTruncate) },
			req:   &toolctx.Request{Tool: "t"}, result: text(big),
			enforced: func(t *testing.T, res *toolctx.CallResult) {
				require.False(t, res.Failed())
				assert.Contains(t, res.Content[0].(*toolctx.Text).Text, "[truncated by the server")
			},
			would: []toolctx.Note{{Key: "would_truncated_from_bytes", Value: "2002"}}},
		{name: "scrub_secrets",
			guard: func() toolctx.Middleware { return middleware.ScrubSecrets(middleware.ScrubConfig{}) },
			req:   &toolctx.Request{Tool: "t"}, result: text("key " + secret),
			enforced: func(t *testing.T, res *toolctx.CallResult) {
				assert.NotContains(t, res.Content[0].(*toolctx.Text).Text, secret)
			},
			would: []toolctx.Note{{Key: "would_scrubbed", Value: "aws_access_key_id"}}},
	}
}

// run calls h with req and returns its result, the handler's runs so far
// and the result the handler made.
type counted struct {
	runs atomic.Int64
	made atomic.Pointer[toolctx.CallResult]
	h    toolctx.Handler
}

func newCounted(result func() *toolctx.CallResult) *counted {
	c := &counted{}
	c.h = toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		c.runs.Add(1)
		r := result()
		c.made.Store(r)
		return r
	})
	return c
}

// In observe mode every guard decides as usual, lets the call run (or its
// result through) unchanged, and notes what it would have done; without
// it the same guard, set up the same way, rejects or changes the call.
func TestObserveEveryGuard(t *testing.T) {
	for _, c := range observeCases() {
		t.Run(c.name, func(t *testing.T) {
			// Rate limit and bulkhead stop the second call: the first takes
			// the token, or holds the slot.
			stopsSecond := c.name == "rate_limit" || c.name == "bulkhead"
			prime := func(h toolctx.Handler, release chan struct{}) {
				if !stopsSecond {
					return
				}
				if c.name == "rate_limit" {
					h.CallTool(context.Background(), c.req)
					return
				}
				go h.CallTool(context.Background(), &toolctx.Request{Tool: "hold"})
			}

			for _, observe := range []bool{false, true} {
				inner := newCounted(c.result)
				held := make(chan struct{})
				release := make(chan struct{})
				handler := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
					if req.Tool == "hold" {
						close(held)
						<-release
						return toolctx.TextResult("held")
					}
					return inner.h.CallTool(ctx, req)
				})
				g := c.guard()
				if observe {
					g = middleware.Observe(g)
				}
				h := g(handler)
				prime(h, release)
				if c.name == "bulkhead" {
					<-held
				}
				runsBefore := inner.runs.Load()
				res := h.CallTool(context.Background(), c.req)
				close(release)
				if !observe {
					c.enforced(t, res)
					_, noted := res.Note(middleware.NoteWouldReject)
					assert.False(t, noted, "no note outside observe mode")
					continue
				}
				require.Equal(t, runsBefore+1, inner.runs.Load(), "observe mode: the handler ran")
				made := inner.made.Load()
				assert.False(t, res.Failed(), "the caller gets the handler's result")
				assert.Equal(t, made.Content, res.Content, "unchanged")
				assert.Equal(t, append([]toolctx.Note{{Key: middleware.NoteWouldReject, Value: c.name}}, c.would...), res.Notes())
			}
		})
	}
}

// A call the guard admits gets no note in observe mode.
func TestObserveAdmittedCallsAreNotNoted(t *testing.T) {
	for _, c := range observeCases() {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "max_result_bytes" || c.name == "scrub_secrets" {
				c.result = func() *toolctx.CallResult { return toolctx.TextResult("small and clean") }
			}
			if c.name == "max_arg_bytes" {
				c.req = &toolctx.Request{Tool: "t", Arguments: toolctx.RawArguments([]byte(`{}`))}
			}
			if c.name == "require_scopes" {
				c.req = &toolctx.Request{Tool: "t", Identity: &toolctx.Identity{Subject: "u", Scopes: []string{"admin"}}}
			}
			inner := newCounted(c.result)
			res := middleware.Observe(c.guard())(inner.h).CallTool(context.Background(), c.req)
			assert.Same(t, inner.made.Load(), res, "the handler's own result")
			assert.Empty(t, res.Notes())
		})
	}
}

// The rate limiter counts in observe mode as it does when it enforces: the
// calls within the burst take tokens and are not noted, the calls over it
// take none and are.
func TestObserveRateLimitCountsAsUsual(t *testing.T) {
	inner := newCounted(func() *toolctx.CallResult { return toolctx.TextResult("ok") })
	h := middleware.Observe(middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 3}))(inner.h)
	var noted []bool
	for range 6 {
		_, n := h.CallTool(context.Background(), &toolctx.Request{Tool: "t", SessionID: "s"}).Note(middleware.NoteWouldReject)
		noted = append(noted, n)
	}
	assert.Equal(t, []bool{false, false, false, true, true, true}, noted)
	assert.Equal(t, int64(6), inner.runs.Load(), "every call ran")
}

// Observed, a bulkhead never makes a call wait: with every slot held and a
// MaxWait of an hour, the next calls run at once, without a slot, and are
// noted; once the slot is free again a call takes it and is not noted (the
// noted calls released no slot they did not take).
func TestObserveBulkheadNeverWaits(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		cfg := middleware.BulkheadConfig{Limit: 1, MaxWait: time.Hour}
		if keyed {
			cfg.Key = middleware.ToolKey
		}
		held, release := make(chan struct{}), make(chan struct{})
		var inFlight, maxInFlight atomic.Int64
		h := middleware.Observe(middleware.Bulkhead(cfg))(toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
			}
			if string(req.Arguments.JSON()) == "hold" {
				close(held)
				<-release
			}
			return toolctx.TextResult("ok")
		}))
		first := make(chan *toolctx.CallResult)
		go func() {
			first <- h.CallTool(context.Background(), &toolctx.Request{Tool: "t", Arguments: toolctx.RawArguments([]byte("hold"))})
		}()
		<-held
		for range 3 {
			res := h.CallTool(context.Background(), &toolctx.Request{Tool: "t"}) // would wait an hour if enforced
			v, _ := res.Note(middleware.NoteWouldReject)
			assert.Equal(t, "bulkhead", v, "keyed=%v", keyed)
			assert.False(t, res.Failed())
		}
		assert.Equal(t, int64(2), maxInFlight.Load(), "the noted calls ran beside the one holding the slot")
		close(release)
		res := <-first
		assert.Empty(t, res.Notes(), "the call that had the slot is not noted")
		res = h.CallTool(context.Background(), &toolctx.Request{Tool: "t"})
		assert.Empty(t, res.Notes(), "keyed=%v: the slot is free again and taken as usual", keyed)
	}
}

// Observe mode is the observed guard's only: a guard inside what it wraps
// still enforces, also on the path where the observed guard would have
// rejected; a guard outside it too. A chain of guards inside one Observe
// is observed as a whole.
func TestObserveIsScopedToTheGuard(t *testing.T) {
	scopes := middleware.RequireScopes(middleware.ScopePolicy{Default: []string{"admin"}})
	limit := middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1})
	inner := newCounted(func() *toolctx.CallResult { return toolctx.TextResult("ok") })
	req := &toolctx.Request{Tool: "t", Identity: &toolctx.Identity{Subject: "u"}}

	h := middleware.Observe(limit)(scopes(inner.h))
	for i := range 2 { // the second is over the rate: observed, then refused by the scopes
		res := h.CallTool(context.Background(), req)
		assertCode(t, res, errs.CodePermissionDenied, "call %d: the inner guard enforces", i)
		v, noted := res.Note(middleware.NoteWouldReject)
		assert.Equal(t, i == 1, noted, "call %d: %v", i, v)
	}
	assert.Zero(t, inner.runs.Load())

	inner = newCounted(func() *toolctx.CallResult { return toolctx.TextResult("ok") })
	limit = middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1})
	both := middleware.Observe(middleware.New(limit, scopes).Middleware())(inner.h)
	both.CallTool(context.Background(), req)
	res := both.CallTool(context.Background(), req)
	assert.False(t, res.Failed())
	assert.Equal(t, []toolctx.Note{{Key: middleware.NoteWouldReject, Value: "require_scopes"}, {Key: middleware.NoteWouldReject, Value: "rate_limit"}},
		res.Notes(), "both guards of the chain are observed and noted (the inner's note first)")
	assert.Equal(t, int64(2), inner.runs.Load())

	// A guard outside Observe enforces.
	outer := scopes(middleware.Observe(middleware.MaxArgBytes(1))(inner.h))
	res = outer.CallTool(context.Background(), &toolctx.Request{Tool: "t"})
	assertCode(t, res, errs.CodeUnauthenticated, "the outer guard enforces")
}

// The note reaches the audit row: the row is the handler's outcome, with
// what the guard would have done.
func TestObserveNoteInTheAuditRow(t *testing.T) {
	var rows []audit.Record
	chain := middleware.New(
		audit.Interceptor(audit.EmitterFunc(func(_ context.Context, r audit.Record) { rows = append(rows, r) })),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.Observe(middleware.MaxArgBytes(4)),
	)
	h, err := chain.ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	require.NoError(t, err)
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c", Arguments: toolctx.RawArguments([]byte(`{"a":1}`))})
	assert.Nil(t, res.Error)
	require.Len(t, rows, 1)
	assert.Equal(t, audit.OutcomeOK, rows[0].Outcome)
	assert.Equal(t, []toolctx.Note{{Key: middleware.NoteWouldReject, Value: "max_arg_bytes"}}, rows[0].Notes)
}

func TestObserveNilPanics(t *testing.T) {
	assert.PanicsWithValue(t, "middleware.Observe: the guard is nil", func() { middleware.Observe(nil) })
}

// assertCode checks that res is a rejection with the public code c.
func assertCode(t *testing.T, res *toolctx.CallResult, c errs.Code, msgAndArgs ...any) {
	t.Helper()
	require.True(t, res.Failed(), msgAndArgs...)
	var pub *errs.Error
	require.ErrorAs(t, res.Cause(), &pub, msgAndArgs...)
	assert.Equal(t, c, pub.Code(), msgAndArgs...)
}
