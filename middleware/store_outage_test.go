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

	"github.com/toolmw/toolmw/middleware"
)

// toggleStore is a RateStore that fails while down is set and admits every
// call otherwise.
type toggleStore struct{ down atomic.Bool }

func (s *toggleStore) TakeToken(context.Context, string, middleware.RateBucket) (time.Duration, bool, error) {
	if s.down.Load() {
		return 0, false, errors.New(storeSecret)
	}
	return 0, true, nil
}

// During a store outage OnError hears of its first failure (the raw error)
// and of its end (a *StoreOutage counting every failure in between), not of
// each call: 50 calls during an outage give two events, and the next
// outage two more.
func TestStoreOutageReportedOncePerStateChange(t *testing.T) {
	var mu sync.Mutex
	var events []error
	st := &toggleStore{}
	h := middleware.RateLimit(middleware.RateLimitConfig{Rate: 1e6, Burst: 1000, Store: st,
		StorePolicy: middleware.StorePolicy{Name: "o", OnError: func(_ context.Context, ev middleware.DiagnosticEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev.Cause())
		}}})(textTool("answer"))
	taken := func() []error {
		mu.Lock()
		defer mu.Unlock()
		out := events
		events = nil
		return out
	}
	calls := func(n int) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				res := h.CallTool(context.Background(), newReq("t"))
				assert.False(t, res.Failed(), "failing open, every call runs")
			})
		}
		wg.Wait()
	}
	calls(5)
	assert.Empty(t, taken(), "a healthy store: nothing to report")
	for outage := range 2 {
		st.down.Store(true)
		calls(50)
		got := taken()
		require.Len(t, got, 1, "outage %d: one report for its 50 failures", outage)
		assert.EqualError(t, got[0], storeSecret, "the first failure's raw error")
		st.down.Store(false)
		calls(5)
		got = taken()
		require.Len(t, got, 1, "outage %d: one report of its end", outage)
		var o *middleware.StoreOutage
		require.ErrorAs(t, got[0], &o)
		assert.Equal(t, int64(50), o.Failures, "every failure counted")
		assert.Equal(t, "ratelimit", o.Guard)
		assert.Positive(t, o.Duration)
		assert.Contains(t, o.Error(), "after 50 failed calls")
	}
}

// With no OnError, the default logger gets the same two lines per outage.
func TestStoreOutageDefaultLogsTwice(t *testing.T) {
	logs := captureDefault(t)
	st := &toggleStore{}
	h := middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Limit(1e6), Burst: 1000, Store: st,
		StorePolicy: middleware.StorePolicy{Name: "o"}})(textTool("answer"))
	st.down.Store(true)
	for range 20 {
		h.CallTool(context.Background(), newReq("t"))
	}
	st.down.Store(false)
	h.CallTool(context.Background(), newReq("t"))
	out := logs.String()
	assert.Equal(t, 1, countLines(out, "store failed"), "%s", out)
	assert.Equal(t, 1, countLines(out, "store answers again"), "%s", out)
	assert.Contains(t, out, "failures=20")
}

func countLines(s, sub string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}
