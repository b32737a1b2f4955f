package middleware_test

import (
	"context"
	"sync"
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

// The behaviour-table row "a guard before the handler rejects", for
// RateLimit, through both adapters: a bucket per caller, a public
// rate_limited rejection with retry-after, a row with its code, no
// diagnostics, and nothing of the handler's result.
func TestRateLimitThroughAdapters(t *testing.T) {
	var ran atomic.Int32
	tools := map[string]toolctx.Handler{"search": toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		ran.Add(1)
		return toolctx.TextResult("CANARY-result-of-a-rejected-call")
	})}
	limit := middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 2})
	forEachSDK(t, tools, []toolctx.Middleware{limit}, func(t *testing.T, call caller, side *serverSide) {
		ran.Store(0)
		ctx := context.Background()
		sdk := t.Name() // each adapter's callers are distinct subjects: one limiter serves both subtests
		for i := 0; i < 2; i++ {
			got := call(t, ctx, callOpts{Tool: "search", Subject: "alice " + sdk})
			require.False(t, got.IsError, "call %d within the burst: %s", i, got.JSON)
		}
		got := call(t, ctx, callOpts{Tool: "search", Subject: "alice " + sdk})
		require.True(t, got.IsError, "the third call is over the rate: %s", got.JSON)
		assert.Equal(t, errs.CodeRateLimited, got.Code, "rate_limited")
		assert.Regexp(t, `^too many calls: retry after (\d+h)?(\d+m)?[0-9.]+s$`, got.Text, "the public message says when")
		require.Contains(t, got.Detail, "retry_after_ms", "the detail says when")
		ms := got.Detail["retry_after_ms"].(float64)
		assert.InDelta(t, float64(time.Hour/time.Millisecond), ms, 60_000, "about an hour until the next token")
		assert.NotContains(t, got.JSON, "CANARY", "nothing of the handler's result")
		assert.Equal(t, int32(2), ran.Load(), "the handler ran only for the admitted calls")

		other := call(t, ctx, callOpts{Tool: "search", Subject: "bob " + sdk})
		assert.False(t, other.IsError, "another caller has a bucket of its own: %s", other.JSON)

		rows, diags := side.take()
		require.Len(t, rows, 4, "one row per call")
		assert.Equal(t, audit.OutcomeRejected, rows[2].Outcome, "the rejection's row: rejected")
		assert.Equal(t, errs.CodeRateLimited, rows[2].Code, "with its code")
		assert.Empty(t, diags, "a rejection is not a diagnostic")
	})
}

// 64 goroutines against one limiter: exactly the burst is admitted (the
// rate refills nothing during the test), every rejection is public and
// audited, under -race.
func TestRateLimitConcurrent(t *testing.T) {
	const (
		goroutines = 64
		perG       = 20
		burst      = 100
	)
	var admitted atomic.Int32
	side := &serverSide{}
	h := thenG(t, side.guardChain(middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: burst, Key: middleware.ToolKey})),
		toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			admitted.Add(1)
			return toolctx.TextResult("ok")
		}))
	var wg sync.WaitGroup
	results := make([][]*toolctx.CallResult, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				results[g] = append(results[g], h.CallTool(context.Background(), reqG("search")))
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(burst), admitted.Load(), "exactly the burst is admitted")
	rejected := 0
	for _, rs := range results {
		for _, res := range rs {
			if !res.IsError {
				continue
			}
			rejected++
			require.NotNil(t, res.Error, "a rejection is normalized")
			assert.Equal(t, errs.CodeRateLimited, res.Error.Code, "every rejection is rate_limited")
			assert.False(t, res.Scrubbed(), "and public")
		}
	}
	assert.Equal(t, goroutines*perG-burst, rejected, "every other call is rejected")
	rows, diags := side.take()
	require.Len(t, rows, goroutines*perG, "every call has a row")
	n := 0
	for _, r := range rows {
		if r.Code == errs.CodeRateLimited {
			n++
			assert.Equal(t, audit.OutcomeRejected, r.Outcome, "a rejection's row says so")
		}
	}
	assert.Equal(t, rejected, n, "every rejection is audited")
	assert.Empty(t, diags, "no diagnostics")
}

func TestRateLimitConstruction(t *testing.T) {
	for name, cfg := range map[string]middleware.RateLimitConfig{
		"no rate":        {},
		"negative rate":  {Rate: -1},
		"infinite rate":  {Rate: rate.Inf},
		"negative burst": {Rate: 1, Burst: -1},
		"negative keys":  {Rate: 1, MaxKeys: -1},
	} {
		assert.Panics(t, func() { middleware.RateLimit(cfg) }, "%s: a construction mistake fails at construction", name)
	}
	assert.NotPanics(t, func() { middleware.RateLimit(middleware.RateLimitConfig{Rate: 10}) }, "the defaults are enough")
}

func TestKeys(t *testing.T) {
	req := &toolctx.Request{Tool: "t", SessionID: "s1"}
	assert.Equal(t, "s1", middleware.CallerKey(req), "no identity: the session")
	req.Identity = &toolctx.Identity{Subject: "alice"}
	assert.Equal(t, "alice", middleware.CallerKey(req), "the subject when there is one")
	assert.Equal(t, "t", middleware.ToolKey(req), "ToolKey")
	assert.Zero(t, testing.AllocsPerRun(100, func() { middleware.CallerKey(req) }), "CallerKey does not allocate")
}
