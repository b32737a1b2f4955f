package redisstore

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// closedPort is a loopback address nothing listens on: Redis down.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// blackhole is a loopback server that accepts connections and reads
// them, and never answers: Redis stalled.
func blackhole(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// events collects what a StorePolicy's OnError hears.
type events struct {
	mu  sync.Mutex
	evs []middleware.DiagnosticEvent
}

func (e *events) hook(_ context.Context, ev middleware.DiagnosticEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, ev)
}

func (e *events) take() []middleware.DiagnosticEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.evs
	e.evs = nil
	return out
}

// bound is how long a call may take when its store's deadline is 50ms: far
// less than go-redis's 3s read timeout, generous for a busy machine.
const bound = 2 * time.Second

// TestStoreDownOrStalled: with Redis down (a closed port) or stalled (a
// server that never answers), every guard answers within its deadline.
// Failing open (the default), the call goes on with the in-process state
// and the notes store=fallback and store_cause; failing closed, it is the
// public unavailable error, with the store's raw error only as the cause
// the audit row records. OnError gets the raw error of the outage's first
// failure either way, and only that one.
func TestStoreDownOrStalled(t *testing.T) {
	for name, addr := range map[string]string{"down": closedPort(t), "stalled": blackhole(t)} {
		t.Run(name, func(t *testing.T) {
			s, err := Open("redis://" + addr + "/0")
			require.NoError(t, err)
			defer s.Close()
			var ev events
			policy := func(closed bool) middleware.StorePolicy {
				return middleware.StorePolicy{Name: "g", Timeout: 50 * time.Millisecond, FailClosed: closed, OnError: ev.hook}
			}
			wantCause := "error"
			if name == "stalled" {
				wantCause = "timeout"
			}
			for _, closed := range []bool{false, true} {
				guards := map[string]toolctx.Middleware{
					"ratelimit": middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 2, Store: s, StorePolicy: policy(closed)}),
					"bulkhead":  middleware.Bulkhead(middleware.BulkheadConfig{Limit: 2, Store: s, StorePolicy: policy(closed)}),
					"cache":     middleware.Cache(middleware.CacheConfig{TTL: time.Minute, Store: s, StorePolicy: policy(closed)}),
				}
				for guard, m := range guards {
					h := okHandler(m)
					for i := 0; i < 3; i++ {
						start := time.Now()
						res := h.CallTool(context.Background(), request("alice"))
						took := time.Since(start)
						require.Less(t, took, bound, "%s (fail closed %v): answered within its deadline", guard, closed)
						evs := ev.take()
						if i > 0 {
							// One outage: its first failure was reported, the
							// others are counted until the store answers.
							require.Empty(t, evs, "%s: a failure during an outage already reported is counted, not reported", guard)
						} else {
							require.Len(t, evs, 1, "%s: the outage's first failure is reported", guard)
							assert.Error(t, evs[0].Cause(), "the raw error")
						}
						cause, _ := res.Note(middleware.NoteStoreCause)
						assert.Equal(t, guard+" "+wantCause, cause, "%s: the kind of failure is noted", guard)
						note, _ := res.Note(middleware.NoteStore)
						if !closed {
							assert.Equal(t, "fallback", note, "%s: the row says the guard decided alone", guard)
							if i == 0 {
								assert.Equal(t, errs.Code(""), evs[0].Code, "the call went on")
							}
							if guard == "ratelimit" && i == 2 {
								assert.True(t, res.Failed(), "the in-process bucket decides: burst 2")
								continue
							}
							assert.False(t, res.Failed(), "%s: failing open, the call went on", guard)
							continue
						}
						assert.Equal(t, "unavailable", note)
						if i == 0 {
							assert.Equal(t, errs.CodeUnavailable, evs[0].Code)
						}
						out := normalized(res)
						require.True(t, out.Failed(), "%s: failing closed, the call is rejected", guard)
						assert.Equal(t, errs.CodeUnavailable, out.Error.Code)
						assert.Equal(t, "the service is temporarily unavailable: retry shortly", out.Error.Message, "a public message, no Redis text")
						assert.Nil(t, out.Error.Detail)
						assert.True(t, out.Scrubbed(), "the audit row records the raw message")
						assert.Contains(t, out.Cause().Error(), guard+" store: ", "the raw cause names the guard")
					}
				}
			}
		})
	}
}
