package middleware_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// flaky fails with fail for its first n calls, then succeeds.
func flaky(n int32, fail func() *toolctx.CallResult, calls *atomic.Int32) toolctx.Handler {
	return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		if calls.Add(1) <= n {
			return fail()
		}
		return toolctx.TextResult("fetched")
	})
}

var fastRetry = middleware.RetryConfig{InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}

// Retry through both adapters: an unavailable dependency twice, then
// success: the client gets the success, the call has one row with
// attempts=3 and no diagnostics. A raw error is not retried by default.
func TestRetryThroughAdapters(t *testing.T) {
	var calls, rawCalls atomic.Int32
	tools := map[string]toolctx.Handler{
		"fetch": flaky(2, func() *toolctx.CallResult { return toolctx.ErrorResult(errs.Unavailable("the upstream is down")) }, &calls),
		"raw": flaky(1, func() *toolctx.CallResult {
			return toolctx.ErrorResult(errors.New("CANARY dial tcp 10.9.9.9:443: connection refused"))
		}, &rawCalls),
	}
	forEachSDK(t, tools, []toolctx.Middleware{middleware.Retry(fastRetry)}, func(t *testing.T, call caller, side *serverSide) {
		calls.Store(0)
		rawCalls.Store(0)
		got := call(t, context.Background(), callOpts{Tool: "fetch"})
		assert.Equal(t, "fetched", got.Text, "the third attempt's success reaches the client: %s", got.JSON)
		assert.Equal(t, int32(3), calls.Load(), "three attempts")

		got = call(t, context.Background(), callOpts{Tool: "raw"})
		assert.Equal(t, errs.CodeInternal, got.Code, "internal is not retried by default")
		assert.NotContains(t, got.JSON, "CANARY", "and its cause stays on the server")
		assert.Equal(t, int32(1), rawCalls.Load(), "one attempt")

		rows, diags := side.take()
		require.Len(t, rows, 2, "one row per call, not per attempt")
		assert.Equal(t, audit.OutcomeOK, rows[0].Outcome, "the retried call succeeded")
		assert.Equal(t, []toolctx.Note{{Key: middleware.NoteAttempts, Value: "3"}}, rows[0].Notes, "attempts=3")
		assert.Empty(t, rows[1].Notes, "a single attempt has no note")
		require.Len(t, diags, 1, "the raw failure is a diagnostic, once")
	})
}

func TestRetryGivesUp(t *testing.T) {
	var calls atomic.Int32
	side := &serverSide{}
	cfg := fastRetry
	cfg.MaxAttempts = 4
	h := thenG(t, side.guardChain(middleware.Retry(cfg)),
		flaky(100, func() *toolctx.CallResult { return toolctx.ErrorResult(errs.Unavailable("down")) }, &calls))
	res := h.CallTool(context.Background(), reqG("fetch"))
	assert.Equal(t, errs.CodeUnavailable, res.Error.Code, "the last failure is the answer")
	assert.Equal(t, int32(4), calls.Load(), "MaxAttempts attempts")
	rows, _ := side.take()
	require.Len(t, rows, 1, "one row")
	assert.Equal(t, []toolctx.Note{{Key: middleware.NoteAttempts, Value: "4"}}, rows[0].Notes, "attempts=4, on a failure too")
}

// A failure built by hand with its public envelope but without IsError is
// a failure (toolctx.CallResult.Failed, the one way to ask), and is
// retried like any other.
func TestRetryHandBuiltFailure(t *testing.T) {
	var calls atomic.Int32
	side := &serverSide{}
	h := thenG(t, side.guardChain(middleware.Retry(fastRetry)),
		flaky(2, func() *toolctx.CallResult {
			pub := errs.Public{Code: errs.CodeUnavailable, Message: "the upstream is down"}
			return &toolctx.CallResult{Error: &pub}
		}, &calls))
	res := h.CallTool(context.Background(), reqG("fetch"))
	assert.False(t, res.Failed(), "the third attempt's success is the answer")
	assert.Equal(t, int32(3), calls.Load(), "a hand-built failure is retried")
}

func TestRetryPredicateAndCodes(t *testing.T) {
	transient := errors.New("read: connection reset by peer")
	var calls atomic.Int32
	var seen []int
	cfg := fastRetry
	cfg.Retryable = func(_ context.Context, a middleware.RetryAttempt) bool {
		seen = append(seen, a.Attempt)
		return errors.Is(a.Cause(), transient)
	}
	h := thenG(t, middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.Retry(cfg)),
		flaky(2, func() *toolctx.CallResult { return toolctx.ErrorResult(transient) }, &calls))
	res := h.CallTool(context.Background(), reqG("t"))
	assert.False(t, res.IsError, "a raw error the predicate marks retryable is retried")
	assert.Equal(t, []int{1, 2}, seen, "the predicate sees each failed attempt's number")

	calls.Store(0)
	cfg = fastRetry
	cfg.Codes = []errs.Code{errs.CodeTimeout}
	h = thenG(t, middleware.New(middleware.Retry(cfg)),
		flaky(1, func() *toolctx.CallResult { return toolctx.ErrorResult(errs.Unavailable("x")) }, &calls))
	assert.True(t, h.CallTool(context.Background(), reqG("t")).IsError, "with Codes set, unavailable is not retried")
	assert.Equal(t, int32(1), calls.Load(), "one attempt")

	calls.Store(0)
	h = thenG(t, middleware.New(middleware.Retry(fastRetry)), toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		calls.Add(1)
		panic("bug")
	}))
	assert.Panics(t, func() { h.CallTool(context.Background(), reqG("t")) }, "a panic goes on to Recover")
	assert.Equal(t, int32(1), calls.Load(), "and is not retried")
}

// Never after cancellation, never past the deadline.
func TestRetryHonoursTheCall(t *testing.T) {
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	h := thenG(t, middleware.New(middleware.Retry(fastRetry)), toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		calls.Add(1)
		cancel() // the client gives up during the first attempt
		return toolctx.ErrorResult(errs.Unavailable("down"))
	}))
	h.CallTool(ctx, reqG("t"))
	assert.Equal(t, int32(1), calls.Load(), "no attempt after cancellation")

	calls.Store(0)
	slow := middleware.RetryConfig{InitialBackoff: time.Hour}
	h = thenG(t, middleware.New(middleware.Retry(slow)),
		flaky(100, func() *toolctx.CallResult { return toolctx.ErrorResult(errs.Unavailable("down")) }, &calls))
	dctx, dcancel := context.WithTimeout(context.Background(), time.Minute)
	defer dcancel()
	start := time.Now()
	res := h.CallTool(dctx, reqG("t"))
	assert.Less(t, time.Since(start), 30*time.Second, "a wait that would end past the deadline is not started")
	assert.Equal(t, int32(1), calls.Load(), "one attempt")
	assert.Equal(t, errs.CodeUnavailable, errs.CodeOf(res.Cause()), "the attempt's own failure is the answer")

	calls.Store(0)
	mid := middleware.RetryConfig{InitialBackoff: time.Hour, MaxBackoff: time.Hour}
	h = thenG(t, middleware.New(middleware.Retry(mid)),
		flaky(100, func() *toolctx.CallResult { return toolctx.ErrorResult(errs.Unavailable("down")) }, &calls))
	wctx, wcancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.CallTool(wctx, reqG("t")) }()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	wcancel() // during the hour-long wait
	<-done
	assert.Equal(t, int32(1), calls.Load(), "a cancelled wait ends the call without another attempt")
}

func TestRetryConstruction(t *testing.T) {
	for name, cfg := range map[string]middleware.RetryConfig{
		"one attempt":      {MaxAttempts: 1},
		"negative":         {MaxAttempts: -2},
		"negative backoff": {InitialBackoff: -1},
		"negative cap":     {MaxBackoff: -1},
		"unknown code":     {Codes: []errs.Code{"flaky"}},
	} {
		assert.Panics(t, func() { middleware.Retry(cfg) }, "%s: a construction mistake fails at construction", name)
	}
}
