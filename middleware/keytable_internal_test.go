package middleware

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/toolctx"
)

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A client that invents 100,000 keys (a new subject or session per call)
// cannot grow the limiter's memory past its MaxKeys, and the limiter keeps
// working for everyone.
func TestRateLimitAdversarialKeys(t *testing.T) {
	const maxKeys = 1000
	l := newRateLimiter(RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1, MaxKeys: maxKeys})
	h := l.middleware(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") }))
	ids := make([]toolctx.Identity, 100_000)
	for i := range ids {
		ids[i].Subject = "attacker-" + strconv.Itoa(i)
	}
	before := heapInUse()
	for i := range ids {
		h.CallTool(context.Background(), &toolctx.Request{Tool: "t", Identity: &ids[i]})
		if i%10_000 == 0 {
			require.LessOrEqual(t, l.buckets.len(), maxKeys, "bounded after %d keys", i)
		}
	}
	assert.LessOrEqual(t, l.buckets.len(), maxKeys, "at most MaxKeys buckets")
	grown := int64(heapInUse()) - int64(before)
	// 100k buckets unbounded would be ~25 MB; 1,000 are ~250 kB.
	assert.Less(t, grown, int64(4<<20), "the heap grew by %d bytes for 100k keys", grown)
	runtime.KeepAlive(ids)

	// A caller with a real bucket is still limited.
	alice := &toolctx.Request{Tool: "t", Identity: &toolctx.Identity{Subject: "alice"}}
	assert.False(t, h.CallTool(context.Background(), alice).IsError, "alice's first call")
	assert.True(t, h.CallTool(context.Background(), alice).IsError, "alice's second is limited")
}

// Expiry: an entry idle past the ttl is dropped when room is needed; a
// busy one (the bulkhead's in-flight slots) never is.
func TestKeyTableExpiry(t *testing.T) {
	busy := map[string]bool{}
	tbl := newKeyTable(2, time.Second, func(v *string) {}, func(v *string) bool { return !busy[*v] })
	put := func(key string, now time.Duration) bool {
		e, mu := tbl.lock(key, int64(now))
		defer mu.Unlock()
		if e == nil {
			return false
		}
		e.v = key
		return true
	}
	require.True(t, put("a", 0), "room for a")
	require.True(t, put("b", 0), "room for b")
	busy["a"], busy["b"] = true, true
	assert.False(t, put("c", 10*time.Second), "full of busy entries: no room, even long after")
	busy["a"] = false
	assert.True(t, put("c", 11*time.Second), "an idle expired entry makes room")
	assert.Equal(t, 2, tbl.len(), "still two")
	e, mu := tbl.lock("b", int64(12*time.Second))
	assert.Equal(t, "b", e.v, "b was kept: it is busy")
	mu.Unlock()
}

// A rate bucket idle for longer than it takes to refill is dropped first
// when room is needed; a recently used one is kept.
func TestRateBucketsExpiry(t *testing.T) {
	l := newRateLimiter(RateLimitConfig{Rate: 1, Burst: 10, MaxKeys: 2}) // ttl: 10s to refill
	b := l.buckets
	ttl := b.ttl
	old := b.get("idle", 0)
	b.get("busy", 0)
	b.get("busy", 2*ttl) // used again just now
	b.get("new", 2*ttl+1)
	assert.Equal(t, 2, b.len(), "still at most MaxKeys")
	_, idleKept := b.m.Load("idle")
	assert.False(t, idleKept, "the idle bucket made room")
	_, busyKept := b.m.Load("busy")
	assert.True(t, busyKept, "the recently used bucket stays")
	assert.NotSame(t, old, b.get("idle", 2*ttl+2), "an expired key starts again with a new (full) bucket")
}
