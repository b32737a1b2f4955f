package middleware_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// storeSecret is in the text of every error the test stores return: the
// client must never see it, the audit row of a call failing closed must.
const storeSecret = "dial tcp 10.9.8.7:6379: redis-password-hunter2"

// brokenStore is a store of all three kinds that fails every call: with
// an error, or (stall) by waiting for its context to end, as a Redis that
// stopped answering does. It counts its calls and the releases.
type brokenStore struct {
	stall    bool
	calls    atomic.Int32
	released atomic.Int32
	healthy  bool // answer instead of failing: Acquire hands out leases
	held     atomic.Int32
}

func (s *brokenStore) fail(ctx context.Context) error {
	s.calls.Add(1)
	if s.stall {
		<-ctx.Done()
		return ctx.Err()
	}
	return errors.New(storeSecret)
}

func (s *brokenStore) TakeToken(ctx context.Context, _ string, _ middleware.RateBucket) (time.Duration, bool, error) {
	return 0, false, s.fail(ctx)
}

func (s *brokenStore) Acquire(ctx context.Context, _ string, _ middleware.Semaphore) (middleware.SemaphoreLease, error) {
	if s.healthy {
		s.calls.Add(1)
		s.held.Add(1)
		return &testLease{s: s}, nil
	}
	return nil, s.fail(ctx)
}

func (s *brokenStore) Get(ctx context.Context, _ string) ([]byte, bool, error) {
	return nil, false, s.fail(ctx)
}

func (s *brokenStore) Set(ctx context.Context, _ string, _ []byte, _ time.Duration) error {
	return s.fail(ctx)
}

type testLease struct {
	s    *brokenStore
	once sync.Once
}

func (l *testLease) Renew(context.Context) error { return nil }

func (l *testLease) Release(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err() // a release must not use the call's ended context
	}
	l.once.Do(func() {
		l.s.released.Add(1)
		l.s.held.Add(-1)
	})
	return nil
}

// TestStoreFailOpenAndClosedThroughAdapters: a guard whose store fails
// answers through both SDKs as the behaviour table says. Failing open the
// call runs (with the in-process state) and the row notes the fallback;
// failing closed the client gets the public unavailable error and nothing
// of the store's text, and the row has the raw message. OnError gets the
// raw error either way; Diagnostics is not called (nothing unexpected
// reached the client).
func TestStoreFailOpenAndClosedThroughAdapters(t *testing.T) {
	for _, closed := range []bool{false, true} {
		for _, guard := range []string{"ratelimit", "bulkhead", "cache"} {
			var storeErrs atomic.Int32
			onError := func(_ context.Context, ev middleware.DiagnosticEvent) {
				assert.EqualError(t, ev.Cause(), storeSecret, "the raw error")
				assert.Equal(t, "t", ev.Details.Tool(), "with the call's details")
				storeErrs.Add(1)
			}
			build := func() []toolctx.Middleware {
				st := &brokenStore{}
				p := middleware.StorePolicy{Name: "g", FailClosed: closed, OnError: onError}
				switch guard {
				case "ratelimit":
					return []toolctx.Middleware{middleware.RateLimit(middleware.RateLimitConfig{Rate: 1000, Store: st, StorePolicy: p})}
				case "bulkhead":
					return []toolctx.Middleware{middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Store: st, StorePolicy: p})}
				}
				return []toolctx.Middleware{middleware.Cache(middleware.CacheConfig{TTL: time.Hour, Store: st, StorePolicy: p})}
			}
			t.Run(guard+map[bool]string{false: " open", true: " closed"}[closed], func(t *testing.T) {
				forEachSDKNew(t, map[string]toolctx.Handler{"t": textTool("answer")}, build, func(t *testing.T, call caller, side *serverSide) {
					storeErrs.Store(0)
					w := call(t, context.Background(), callOpts{Tool: "t", Args: map[string]any{"q": 1}, Subject: "alice"})
					assert.NotContains(t, w.JSON, "hunter2", "nothing of the store's error reaches the client")
					assert.NotContains(t, w.JSON, "10.9.8.7")
					rows, diags := side.take()
					require.Len(t, rows, 1, "one row")
					assert.Empty(t, diags, "no diagnostics")
					assert.NotZero(t, storeErrs.Load(), "OnError heard of it")
					notes := map[string]string{}
					for _, n := range rows[0].Notes {
						notes[n.Key] = n.Value
					}
					assert.Equal(t, guard+" error", notes[middleware.NoteStoreCause])
					if !closed {
						assert.False(t, w.IsError, "failing open, the call ran")
						assert.Equal(t, "answer", w.Text)
						assert.Equal(t, "fallback", notes[middleware.NoteStore], "the row says the guard decided alone")
						return
					}
					assert.True(t, w.IsError)
					assert.Equal(t, errs.CodeUnavailable, w.Code)
					assert.Equal(t, "the service is temporarily unavailable: retry shortly", w.Text)
					assert.Equal(t, "unavailable", notes[middleware.NoteStore])
					assert.Equal(t, errs.CodeUnavailable, rows[0].Code)
					assert.Contains(t, rows[0].Message, storeSecret, "the row has the raw message")
				})
			})
		}
	}
}

// TestStoreStalledIsBounded: a store that never answers holds no call
// past the policy's Timeout (the call then goes on, failing open), and a
// call whose client goes away while the store is asked ends as canceled.
func TestStoreStalledIsBounded(t *testing.T) {
	st := &brokenStore{stall: true}
	p := middleware.StorePolicy{Name: "g", Timeout: 20 * time.Millisecond, OnError: func(context.Context, middleware.DiagnosticEvent) {}}
	for name, m := range map[string]toolctx.Middleware{
		"ratelimit": middleware.RateLimit(middleware.RateLimitConfig{Rate: 1000, Store: st, StorePolicy: p}),
		"bulkhead":  middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Store: st, StorePolicy: p}),
		"cache":     middleware.Cache(middleware.CacheConfig{TTL: time.Hour, Store: st, StorePolicy: p}),
	} {
		h := thenG(t, middleware.New(m), textTool("answer"))
		res := h.CallTool(context.Background(), reqG("t"))
		assert.False(t, res.Failed(), "%s: the call went on once the store's deadline passed", name)
		cause, _ := res.Note(middleware.NoteStoreCause)
		assert.Equal(t, name+" timeout", cause)

		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for st.calls.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		st.calls.Store(0)
		slow := middleware.StorePolicy{Name: "g", Timeout: time.Hour}
		var g toolctx.Middleware
		switch name {
		case "ratelimit":
			g = middleware.RateLimit(middleware.RateLimitConfig{Rate: 1000, Store: st, StorePolicy: slow})
		case "bulkhead":
			g = middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Store: st, StorePolicy: slow, LeaseTTL: 3 * time.Hour})
		default:
			g = middleware.Cache(middleware.CacheConfig{TTL: time.Hour, Store: st, StorePolicy: slow})
		}
		res = thenG(t, middleware.New(g), textTool("answer")).CallTool(ctx, reqG("t"))
		out := toolctx.Classify(ctx, res, errs.Normalizer{})
		assert.Equal(t, errs.CodeCanceled, out.Public.Code, "%s: the client went away while the store was asked", name)
	}
}

// TestBulkheadStoreReleases: a slot taken from the store is given back on
// every path the in-process one is: a result, a panic, a cancelled call;
// the release does not use the call's ended context.
func TestBulkheadStoreReleases(t *testing.T) {
	st := &brokenStore{healthy: true}
	b := middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Store: st, StorePolicy: middleware.StorePolicy{Name: "b"}})
	h := b(toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		assert.Equal(t, int32(1), st.held.Load(), "the call holds its slot")
		switch req.Tool {
		case "panic":
			panic("a tool's bug")
		case "cancel":
			return toolctx.ErrorResult(ctx.Err())
		}
		return toolctx.TextResult("ok")
	}))
	h.CallTool(context.Background(), reqG("ok"))
	assert.Panics(t, func() { h.CallTool(context.Background(), reqG("panic")) })
	ctx, cancel := context.WithCancel(context.Background())
	res := h.CallTool(ctx, reqG("cancel"))
	_ = res
	cancel()
	ctx2, cancel2 := context.WithCancel(context.Background())
	h2 := b(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		cancel2() // the client goes away during the call
		return toolctx.TextResult("late")
	}))
	h2.CallTool(ctx2, reqG("ok"))
	assert.Equal(t, int32(4), st.released.Load(), "every slot was given back")
	assert.Zero(t, st.held.Load())
}

// TestStorePolicyConstruction: mistakes in a StorePolicy fail at
// construction, naming the field.
func TestStorePolicyConstruction(t *testing.T) {
	st := &brokenStore{}
	for name, f := range map[string]func(){
		"no Name": func() {
			middleware.RateLimit(middleware.RateLimitConfig{Rate: 1, Store: st})
		},
		"negative Timeout": func() {
			middleware.Cache(middleware.CacheConfig{TTL: time.Second, Store: st, StorePolicy: middleware.StorePolicy{Name: "c", Timeout: -1}})
		},
		"short LeaseTTL": func() {
			middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Store: st, LeaseTTL: time.Millisecond, StorePolicy: middleware.StorePolicy{Name: "b"}})
		},
		"negative MaxItemBytes": func() {
			middleware.Cache(middleware.CacheConfig{TTL: time.Second, MaxItemBytes: -1})
		},
	} {
		assert.Panics(t, f, name)
	}
	// Without a Store, the StorePolicy is not looked at.
	assert.NotPanics(t, func() {
		middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Second), StorePolicy: middleware.StorePolicy{Timeout: -1}})
	})
}

// TestStoreOnErrorPanics: a panicking OnError is caught: the call's
// answer is unchanged.
func TestStoreOnErrorPanics(t *testing.T) {
	st := &brokenStore{}
	m := middleware.RateLimit(middleware.RateLimitConfig{Rate: 1000, Store: st,
		StorePolicy: middleware.StorePolicy{Name: "g", OnError: func(context.Context, middleware.DiagnosticEvent) { panic("hook bug") }}})
	res := thenG(t, middleware.New(m), textTool("answer")).CallTool(context.Background(), reqG("t"))
	assert.False(t, res.Failed())
	assert.True(t, strings.HasPrefix(res.Content[0].(*toolctx.Text).Text, "answer"))
}

// fullStore is a SemaphoreStore whose slots are all taken, and a
// RateStore whose buckets are all empty.
type fullStore struct{}

func (fullStore) Acquire(context.Context, string, middleware.Semaphore) (middleware.SemaphoreLease, error) {
	return nil, nil
}

func (fullStore) TakeToken(context.Context, string, middleware.RateBucket) (time.Duration, bool, error) {
	return time.Second, false, nil
}

// TestStoreGuardsObserveMode: in observe mode a guard on a store decides
// as usual and does not block: a call its store rejects (or, failing
// closed, its failing store) runs at once, noted would_reject.
func TestStoreGuardsObserveMode(t *testing.T) {
	closed := middleware.StorePolicy{Name: "g", FailClosed: true, OnError: func(context.Context, middleware.DiagnosticEvent) {}}
	for name, m := range map[string]toolctx.Middleware{
		"rate_limit":        middleware.RateLimit(middleware.RateLimitConfig{Rate: 1, Store: fullStore{}, StorePolicy: middleware.StorePolicy{Name: "g"}}),
		"bulkhead":          middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, MaxWait: time.Hour, Store: fullStore{}, StorePolicy: middleware.StorePolicy{Name: "g"}}),
		"rate_limit closed": middleware.RateLimit(middleware.RateLimitConfig{Rate: 1, Store: &brokenStore{}, StorePolicy: closed}),
		"bulkhead closed":   middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Store: &brokenStore{}, StorePolicy: closed}),
	} {
		res := thenG(t, middleware.New(middleware.Observe(m)), textTool("answer")).CallTool(context.Background(), reqG("t"))
		assert.False(t, res.Failed(), "%s: the call ran", name)
		guard, _ := res.Note(middleware.NoteWouldReject)
		assert.Equal(t, strings.Fields(name)[0], guard, "%s: the row says what the guard would have done", name)
	}
}
