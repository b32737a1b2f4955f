package middleware

import (
	"context"
	"math/rand/v2"
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

// A bucket that has refilled is dropped first when room is needed (a new
// one is the same); one still short of tokens is kept.
func TestRateBucketsExpiry(t *testing.T) {
	l := newRateLimiter(RateLimitConfig{Rate: 1, Burst: 10, MaxKeys: 2}) // a token a second
	b := l.buckets
	sec := int64(time.Second)
	idle := b.get("idle", 0)
	_, ok := l.take(idle, 0)
	require.True(t, ok, "idle's first call")
	busy := b.get("busy", 0)
	for i := 0; i < 5; i++ {
		_, ok := l.take(busy, 20*sec)
		require.True(t, ok, "busy's call %d", i)
	}
	b.get("new", 20*sec+1) // idle has been full since 1s; busy is 5 tokens short until 25s
	assert.Equal(t, 2, b.len(), "still at most MaxKeys")
	_, idleKept := b.m.Load("idle")
	assert.False(t, idleKept, "the full bucket made room")
	_, busyKept := b.m.Load("busy")
	assert.True(t, busyKept, "the bucket short of tokens stays")
	assert.NotSame(t, idle, b.get("idle", 20*sec+2), "a dropped key starts again with a new (full) bucket")
}

// The buckets decide as golang.org/x/time/rate's Limiter.Allow does, call
// for call, and the retry-after is the time until its next token: random
// call times against several rates and bursts, with a limiter of the
// library beside each bucket.
func TestRateBucketMatchesXTimeRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, c := range []struct {
		every time.Duration
		burst int
	}{
		{time.Millisecond, 1}, {7 * time.Millisecond, 3}, {time.Second / 30, 10}, {time.Second, 5}, {time.Minute, 2},
	} {
		l := newRateLimiter(RateLimitConfig{Rate: rate.Every(c.every), Burst: c.burst})
		b := &bucket{}
		ref := rate.NewLimiter(rate.Every(c.every), c.burst)
		now := int64(0)
		admitted, rejected := 0, 0
		afterWait := false // this call is the first after a rejection's wait: it must be admitted
		for i := 0; i < 20_000; i++ {
			// Bursts of calls closer than the interval, and pauses.
			switch {
			case afterWait:
			case rng.IntN(10) == 0:
				now += rng.Int64N(int64(c.every) * int64(c.burst+2))
			default:
				now += rng.Int64N(int64(c.every) / 2)
			}
			at := l.start.Add(time.Duration(now))
			wantOK := ref.AllowN(at, 1)
			wait, ok := l.take(b, now)
			require.Equal(t, wantOK, ok, "every %v burst %d, call %d at %v: the same decision as x/time/rate", c.every, c.burst, i, time.Duration(now))
			if afterWait {
				require.True(t, ok, "every %v burst %d, call %d: a token once the wait is over", c.every, c.burst, i)
				afterWait = false
			}
			if ok {
				admitted++
				continue
			}
			rejected++
			refWait := time.Duration((1 - ref.TokensAt(at)) * float64(c.every))
			require.InDelta(t, float64(refWait), float64(wait), float64(time.Microsecond),
				"every %v burst %d, call %d: the wait until the next token", c.every, c.burst, i)
			require.False(t, ref.AllowN(at.Add(wait-time.Microsecond), 1), "x/time/rate has no token either just before the wait ends")
			now += int64(wait + time.Microsecond)
			afterWait = true
		}
		require.Positive(t, admitted, "every %v: some admitted", c.every)
		require.Positive(t, rejected, "every %v: some rejected", c.every)
	}
}
