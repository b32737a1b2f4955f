package middleware_test

import (
	"context"
	"sync"
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

// gate is a handler that holds every call until it is opened, and says
// when each has entered.
type gate struct {
	entered chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 1024), open: make(chan struct{})} }

func (g *gate) handler() toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		g.entered <- struct{}{}
		select {
		case <-g.open:
			return toolctx.TextResult("done")
		case <-ctx.Done():
			return toolctx.ErrorResult(ctx.Err())
		}
	})
}

// The behaviour-table row "a guard before the handler rejects", for
// Bulkhead, through both adapters: with its one slot held, the next call is
// rejected with the public unavailable error and a retry-after; a row with
// its code; no diagnostics.
func TestBulkheadThroughAdapters(t *testing.T) {
	g := newGate()
	tools := map[string]toolctx.Handler{"export": g.handler()}
	for _, sc := range sdkCases {
		t.Run(sc.name, func(t *testing.T) {
			side := &serverSide{}
			call := sc.serve(t, side.guardChain(middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1})), tools)
			g.open = make(chan struct{})
			open := sync.OnceFunc(func() { close(g.open) })
			defer open() // a failed assertion must not leave the first call in the gate
			first := make(chan wireResult, 1)
			go func() { first <- call(t, context.Background(), callOpts{Tool: "export"}) }()
			<-g.entered // the one slot is taken

			// A deadline, so that a broken bulkhead fails the test rather
			// than hanging it in the gate.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := call(t, ctx, callOpts{Tool: "export"})
			require.True(t, got.IsError, "over the limit: %s", got.JSON)
			assert.Equal(t, errs.CodeUnavailable, got.Code, "unavailable by default")
			assert.Equal(t, "too many calls in flight: retry after 1s", got.Text, "the public message")
			assert.Equal(t, map[string]any{"retry_after_ms": float64(1000), "max_in_flight": float64(1)}, got.Detail, "retry-after and the limit")

			open()
			assert.False(t, (<-first).IsError, "the admitted call finishes")
			assert.False(t, call(t, context.Background(), callOpts{Tool: "export"}).IsError, "and frees its slot")
			<-g.entered

			rows, diags := side.take()
			require.Len(t, rows, 3, "one row per call")
			var codes []errs.Code
			for _, r := range rows {
				codes = append(codes, r.Code)
			}
			assert.ElementsMatch(t, []errs.Code{"", "", errs.CodeUnavailable}, codes, "the rejection's row has its code")
			assert.Empty(t, diags, "no diagnostics")
		})
	}
}

// 64 goroutines against a bulkhead of 4, under -race: never more than 4
// in flight; with the 4 slots held, every other call is rejected, publicly
// and with a row; then a free-for-all where admitted plus rejected is
// every call.
func TestBulkheadConcurrent(t *testing.T) {
	const (
		limit      = 4
		goroutines = 64
	)
	var inFlight, maxSeen, holders atomic.Int32
	g := newGate()
	open := sync.OnceFunc(func() { close(g.open) })
	defer open()
	hold := atomic.Bool{}
	hold.Store(true)
	side := &serverSide{}
	h := thenG(t, side.guardChain(middleware.Bulkhead(middleware.BulkheadConfig{Limit: limit, Code: errs.CodeRateLimited})),
		toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				m := maxSeen.Load()
				if n <= m || maxSeen.CompareAndSwap(m, n) {
					break
				}
			}
			if hold.Load() && holders.Add(1) <= limit { // only the first four hold their slot
				return g.handler().CallTool(ctx, req)
			}
			return toolctx.TextResult("ok")
		}))

	// Phase 1: four calls hold the four slots; 60 more are all rejected.
	var held sync.WaitGroup
	for i := 0; i < limit; i++ {
		held.Add(1)
		go func() { defer held.Done(); h.CallTool(context.Background(), reqG("export")) }()
		<-g.entered
	}
	var wg sync.WaitGroup
	rejected := make([]*toolctx.CallResult, goroutines-limit)
	for i := range rejected {
		wg.Add(1)
		go func() { defer wg.Done(); rejected[i] = h.CallTool(context.Background(), reqG("export")) }()
	}
	wg.Wait()
	for _, res := range rejected {
		require.True(t, res.IsError, "with every slot held, a call is rejected")
		assert.Equal(t, errs.CodeRateLimited, res.Error.Code, "with the configured code")
		assert.False(t, res.Scrubbed(), "publicly")
	}
	hold.Store(false)
	open()
	held.Wait()
	rows, diags := side.take()
	require.Len(t, rows, goroutines, "every call has a row")
	n := 0
	for _, r := range rows {
		if r.Code == errs.CodeRateLimited {
			n++
			assert.Equal(t, audit.OutcomeRejected, r.Outcome, "rate_limited is a rejection")
		}
	}
	assert.Equal(t, goroutines-limit, n, "every rejection is audited")

	// Phase 2: a free-for-all.
	var admitted, refused atomic.Int32
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if res := h.CallTool(context.Background(), reqG("export")); res.IsError {
					assert.Equal(t, errs.CodeRateLimited, res.Error.Code, "a rejection")
					refused.Add(1)
				} else {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, maxSeen.Load(), int32(limit), "never more than the limit in flight")
	assert.Equal(t, int32(goroutines*50), admitted.Load()+refused.Load(), "every call is admitted or rejected")
	rows, _ = side.take()
	assert.Len(t, rows, goroutines*50, "and has a row")
	assert.Empty(t, diags, "no diagnostics")
}

func TestBulkheadWaitAndKeys(t *testing.T) {
	g := newGate()
	open := sync.OnceFunc(func() { close(g.open) })
	defer open()
	b := middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, MaxWait: 20 * time.Millisecond, Key: middleware.CallerKey})
	h := thenG(t, middleware.New(middleware.Normalize(errs.Normalizer{}), b), g.handler())
	alice := &toolctx.Request{Tool: "t", Identity: &toolctx.Identity{Subject: "alice"}}
	done := make(chan *toolctx.CallResult, 1)
	go func() { done <- h.CallTool(context.Background(), alice) }()
	<-g.entered

	bounded, cancelBounded := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelBounded()
	res := h.CallTool(bounded, alice)
	assert.Equal(t, errs.CodeUnavailable, res.Error.Code, "alice's slot is held past MaxWait: rejected")

	bob := &toolctx.Request{Tool: "t", Identity: &toolctx.Identity{Subject: "bob"}}
	go func() { done <- h.CallTool(context.Background(), bob) }()
	<-g.entered // bob has a slot of his own

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = h.CallTool(ctx, alice)
	assert.Equal(t, errs.CodeCanceled, res.Error.Code, "a waiting call ends when its context does")

	open()
	assert.False(t, (<-done).IsError, "the held calls finish")
	assert.False(t, (<-done).IsError, "both")
}

func TestBulkheadConstruction(t *testing.T) {
	for name, cfg := range map[string]middleware.BulkheadConfig{
		"no limit":       {},
		"negative wait":  {Limit: 1, MaxWait: -1},
		"negative keys":  {Limit: 1, MaxKeys: -1},
		"wrong code":     {Limit: 1, Code: errs.CodeInternal},
		"negative retry": {Limit: 1, RetryAfter: -1},
	} {
		assert.Panics(t, func() { middleware.Bulkhead(cfg) }, "%s: a construction mistake fails at construction", name)
	}
}
