package middleware

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// KeyFunc picks the key a guard counts a call under: a caller, a session,
// a tool. It must be fast, must not change the request, and should not
// allocate (a key built by concatenation allocates on every call).
type KeyFunc func(req *toolctx.Request) string

// CallerKey is the default key of [RateLimit] and a common one for
// [Bulkhead]: the subject of the caller's identity when there is one, else
// the MCP session id, else "" (one key for every anonymous call without a
// session, as on stateless HTTP or stdio). It does not allocate.
func CallerKey(req *toolctx.Request) string {
	if req.Identity != nil && req.Identity.Subject != "" {
		return req.Identity.Subject
	}
	return req.SessionID
}

// ToolKey keys calls by tool name. It does not allocate.
func ToolKey(req *toolctx.Request) string { return req.Tool }

// defaultMaxKeys bounds the per-key state of RateLimit and Bulkhead when
// the configuration does not.
const defaultMaxKeys = 10_000

// RateLimitConfig configures [RateLimit].
type RateLimitConfig struct {
	// Rate is how many calls per second each key may make, on average
	// (rate.Every(time.Minute/30) is 30 a minute). Required: it must be
	// positive and finite.
	Rate rate.Limit
	// Burst is how many calls a key may make at once, after being idle.
	// Zero means 1.
	Burst int
	// Key picks the bucket a call is counted in. Default: [CallerKey], a
	// bucket per caller. Use [When] to limit some tools only, and one
	// RateLimit per tool for a bucket per caller and tool.
	Key KeyFunc
	// MaxKeys bounds how many buckets are kept (about 200 bytes each).
	// Default 10,000. A bucket idle for as long as it takes to refill is
	// dropped when room is needed, which loses nothing; when none is idle
	// that long (a client inventing keys faster than they expire), an
	// arbitrary bucket is dropped, and its key starts again with a full
	// burst. Keys invented by the client are only as good as the
	// client's honesty: behind a per-caller limit, put a global one
	// (Key returning "") to bound the total.
	MaxKeys int
}

// RateLimit admits calls at the configured rate per key, with token buckets
// (golang.org/x/time/rate). A call over its key's rate is rejected before
// the interceptors inside and the handler run, with the public
// [errs.CodeRateLimited] error "too many calls: retry after 1.5s" and the
// detail {"retry_after_ms": 1500}, the time until the bucket has a token
// again. The audit row has its code; Diagnostics is not called.
//
// One RateLimit is one set of buckets, shared by every handler it wraps.
// The admitted path takes a clock read, a map lookup under a sharded lock
// and the bucket's own lock, and does not allocate once the key has a
// bucket. A configuration mistake panics, at construction.
func RateLimit(cfg RateLimitConfig) toolctx.Middleware {
	return newRateLimiter(cfg).middleware
}

// rateLimiter is one RateLimit's buckets.
type rateLimiter struct {
	buckets *rateBuckets
	key     KeyFunc
	rate    rate.Limit
}

func newRateLimiter(cfg RateLimitConfig) *rateLimiter {
	r := cfg.Rate
	switch {
	case !(r > 0) || r == rate.Inf || math.IsInf(float64(r), 1):
		panic(fmt.Sprintf("middleware.RateLimit: Rate must be positive and finite, got %v", float64(r)))
	case cfg.Burst < 0:
		panic(fmt.Sprintf("middleware.RateLimit: Burst must not be negative, got %d", cfg.Burst))
	case cfg.MaxKeys < 0:
		panic(fmt.Sprintf("middleware.RateLimit: MaxKeys must not be negative, got %d", cfg.MaxKeys))
	}
	burst := max(cfg.Burst, 1)
	maxKeys := cfg.MaxKeys
	if maxKeys == 0 {
		maxKeys = defaultMaxKeys
	}
	key := cfg.Key
	if key == nil {
		key = CallerKey
	}
	// A bucket idle this long is full again: dropping it loses nothing.
	refill := time.Duration(float64(burst) / float64(r) * float64(time.Second))
	return &rateLimiter{
		buckets: &rateBuckets{max: maxKeys, ttl: int64(max(refill, time.Second)), start: time.Now(), rate: r, burst: burst},
		key:     key,
		rate:    r,
	}
}

func (l *rateLimiter) middleware(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		d := time.Since(l.buckets.start) // one monotonic clock read; time.Now reads the wall clock too
		now := l.buckets.start.Add(d)
		lim := l.buckets.get(l.key(req), int64(d))
		if lim.AllowN(now, 1) {
			return next.CallTool(ctx, req)
		}
		return rateLimited(retryAfter(lim, now, l.rate))
	})
}

// rateBuckets holds the buckets, at most max of them. A bucket is found
// without a lock (a sync.Map: keys are read far more often than added);
// adding one takes mu, and drops buckets when the table is full: those idle
// for longer than ttl (full again, so nothing is lost), at most once per
// quarter of ttl, or else an arbitrary one.
type rateBuckets struct {
	m     sync.Map // string -> *bucket
	start time.Time
	ttl   int64 // nanoseconds since start
	max   int
	rate  rate.Limit
	burst int

	mu        sync.Mutex
	n         int // buckets in m, under mu
	lastSweep int64
}

type bucket struct {
	lim  *rate.Limiter
	last atomic.Int64 // when it was last used, nanoseconds since start
}

func (t *rateBuckets) get(key string, now int64) *rate.Limiter {
	if v, ok := t.m.Load(key); ok {
		b := v.(*bucket)
		// Record the use only when the recorded one is a sixteenth of
		// ttl old: a plain load on most calls instead of a locked store,
		// and makeRoom allows for the staleness.
		if now-b.last.Load() > t.ttl/16 {
			b.last.Store(now)
		}
		return b.lim
	}
	return t.add(key, now)
}

func (t *rateBuckets) add(key string, now int64) *rate.Limiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.m.Load(key); ok { // added while we waited for mu
		return v.(*bucket).lim
	}
	if t.n >= t.max {
		t.makeRoom(now)
	}
	b := &bucket{lim: rate.NewLimiter(t.rate, t.burst)}
	b.last.Store(now)
	t.m.Store(key, b)
	t.n++
	return b.lim
}

// makeRoom drops idle buckets, or else one arbitrary bucket; under mu.
func (t *rateBuckets) makeRoom(now int64) {
	if now-t.lastSweep >= t.ttl/4 {
		t.lastSweep = now
		t.m.Range(func(k, v any) bool {
			if now-v.(*bucket).last.Load() > t.ttl+t.ttl/16 { // idle for longer than ttl
				t.m.Delete(k)
				t.n--
			}
			return true
		})
		if t.n < t.max {
			return
		}
	}
	t.m.Range(func(k, _ any) bool {
		t.m.Delete(k)
		t.n--
		return false
	})
}

// len is how many buckets there are.
func (t *rateBuckets) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// retryAfter is how long until lim has a token, rounded up to the
// millisecond.
func retryAfter(lim *rate.Limiter, now time.Time, r rate.Limit) time.Duration {
	wait := time.Duration((1 - lim.TokensAt(now)) / float64(r) * float64(time.Second))
	return max((wait + time.Millisecond - 1).Truncate(time.Millisecond), time.Millisecond)
}

// rateLimited is the public rejection of a call over its rate.
func rateLimited(after time.Duration) *toolctx.CallResult {
	return toolctx.ErrorResult(errs.RateLimited("too many calls: retry after " + after.String()).
		WithDetail(map[string]any{"retry_after_ms": after.Milliseconds()}))
}
