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
// allocate (a key built by concatenation allocates on every call). One that
// panics counts the call under the key "" (shared by every such call, so
// still limited), and its panic is reported to slog.Default().
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
	// positive and finite. The interval between tokens is kept in whole
	// nanoseconds (rate.Every(d) is exactly one token per d); a rate above
	// 1e9 a second counts as 1e9.
	Rate rate.Limit
	// Burst is how many calls a key may make at once, after being idle.
	// Zero means 1.
	Burst int
	// Key picks the bucket a call is counted in. Default: [CallerKey], a
	// bucket per caller. Use [When] to limit some tools only, and one
	// RateLimit per tool for a bucket per caller and tool.
	Key KeyFunc
	// MaxKeys bounds how many buckets are kept (about 100 bytes each, with
	// the key). Default 10,000. A bucket that has refilled is dropped when
	// room is needed, which loses nothing; when none has
	// that long (a client inventing keys faster than they expire), an
	// arbitrary bucket is dropped, and its key starts again with a full
	// burst. Keys invented by the client are only as good as the
	// client's honesty: behind a per-caller limit, put a global one
	// (Key returning "") to bound the total. With a Store, it bounds the
	// in-process buckets of the fallback.
	MaxKeys int
	// Store keeps the buckets outside the process, shared by every
	// replica that uses it (middleware/redisstore). Nil: in the process.
	Store RateStore
	// StorePolicy says how the limiter uses Store: its Name, how long it
	// waits and whether it fails open (the default: the in-process buckets
	// decide alone while the store fails) or closed. Ignored without a
	// Store.
	StorePolicy StorePolicy
}

// RateLimit admits calls at the configured rate per key, with token
// buckets: the semantics of golang.org/x/time/rate's Limiter.Allow (a
// bucket holds at most Burst tokens, starts full, gains Rate tokens a
// second, and a call takes one or is rejected), computed without a lock.
// A call over its key's rate is rejected before the interceptors inside
// and the handler run, with the public [errs.CodeRateLimited] error "too
// many calls: retry after 30s" and the detail {"retry_after_ms": 30000}:
// what a client should wait, the time until the bucket has a token again
// rounded up to the second (to the millisecond below one second), so that
// a wait of 29.998s reads 30s and a client that waits as told is
// admitted. The audit row has its code; Diagnostics is not called.
//
// With a Store, the buckets are the store's, with the same semantics: each
// call takes its token there in one round trip, bounded by the
// StorePolicy's Timeout, and the limit holds across every replica that
// shares the store and the StorePolicy's Name.
//
// One RateLimit is one set of buckets, shared by every handler it wraps.
// The admitted path takes one monotonic clock read, a lock-free lookup of
// the key's bucket and one compare-and-swap, and does not allocate once
// the key has a bucket. A configuration mistake panics, at construction.
// In observe mode ([Observe]) a call over its key's rate takes no token,
// runs, and is noted "would_reject=rate_limit".
func RateLimit(cfg RateLimitConfig) toolctx.Middleware {
	return newRateLimiter(cfg).middleware
}

// rateLimiter is one RateLimit's buckets.
//
// A bucket is one number, its theoretical arrival time (the generic cell
// rate algorithm): the time, on the limiter's clock, at which the bucket
// is full again. At time now it holds Burst - max(tat-now, 0)/interval
// tokens; a call is admitted when that is at least one, that is when
// max(tat, now) - now <= (Burst-1)*interval, and taking the token moves tat
// to max(tat, now) + interval. A bucket with tat <= now is full: the same as
// a new one.
type rateLimiter struct {
	buckets   *rateBuckets
	key       KeyFunc
	start     time.Time // the clock: nanoseconds since start (monotonic)
	interval  int64     // nanoseconds per token
	tolerance int64     // (Burst-1) * interval: how far ahead of now tat may be

	store RateStore  // nil: the buckets above decide alone
	shape RateBucket // for store
	sg    storeGuard
}

// maxSpan bounds interval and tolerance, so that tat never overflows.
const maxSpan = int64(1) << 61

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
	interval := int64(min(max(math.Round(float64(time.Second)/float64(r)), 1), float64(maxSpan)))
	tolerance := int64(min(float64(burst-1)*float64(interval), float64(maxSpan)))
	// A bucket refills in Burst intervals; the table sweeps for full
	// buckets at most once per quarter of that (and of a second).
	refill := time.Duration(min(float64(burst)*float64(interval), float64(maxSpan)))
	l := &rateLimiter{
		buckets:   &rateBuckets{max: maxKeys, sweepEvery: int64(max(refill, time.Second)) / 4},
		key:       key,
		start:     time.Now(),
		interval:  interval,
		tolerance: tolerance,
	}
	if cfg.Store != nil {
		l.store = cfg.Store
		l.shape = RateBucket{Interval: time.Duration(interval), Burst: burst}
		l.sg = newStoreGuard("RateLimit", cfg.StorePolicy)
	}
	return l
}

func (l *rateLimiter) middleware(next toolctx.Handler) toolctx.Handler {
	if l.store != nil {
		return l.shared(next)
	}
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		now := int64(time.Since(l.start)) // one monotonic clock read; time.Now reads the wall clock too
		wait, ok := l.take(l.buckets.get(callKey(ctx, "RateLimit", l.key, req), now), now)
		if ok {
			return next.CallTool(ctx, req)
		}
		return reject(ctx, guardRateLimit, rateLimited(retryAfter(wait)), next, req)
	})
}

// shared is the limiter on its store, with the in-process buckets as the
// fallback.
func (l *rateLimiter) shared(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		key := callKey(ctx, "RateLimit", l.key, req)
		sctx, cancel := l.sg.ctx(ctx)
		wait, ok, err := l.store.TakeToken(sctx, l.sg.ns+key, l.shape)
		cancel()
		if err == nil {
			l.sg.answered(ctx, req)
			if ok {
				return next.CallTool(ctx, req)
			}
			return reject(ctx, guardRateLimit, rateLimited(retryAfter(wait)), next, req)
		}
		if ctx.Err() != nil { // the call ended while the store was asked
			return toolctx.ErrorResult(ctx.Err())
		}
		if res := l.sg.failed(ctx, req, err); res != nil {
			return reject(ctx, guardRateLimit, res, next, req)
		}
		now := int64(time.Since(l.start))
		if wait, ok = l.take(l.buckets.get(key, now), now); !ok {
			return l.sg.noted(reject(ctx, guardRateLimit, rateLimited(retryAfter(wait)), next, req), err)
		}
		return l.sg.noted(next.CallTool(ctx, req), err)
	})
}

// take takes a token from b at now, or reports how long until b has one.
func (l *rateLimiter) take(b *bucket, now int64) (wait time.Duration, ok bool) {
	for {
		tat := b.tat.Load()
		t := max(tat, now)
		if ahead := t - now; ahead > l.tolerance {
			return time.Duration(ahead - l.tolerance), false
		}
		if b.tat.CompareAndSwap(tat, t+l.interval) {
			return 0, true
		}
	}
}

// rateBuckets holds the buckets, at most max of them. A bucket is found
// without a lock (a sync.Map: keys are read far more often than added);
// adding one takes mu, and drops buckets when the table is full: the full
// ones (nothing is lost), at most once per sweepEvery, or else an
// arbitrary one.
type rateBuckets struct {
	m          sync.Map // string -> *bucket
	max        int
	sweepEvery int64 // nanoseconds

	mu        sync.Mutex
	n         int // buckets in m, under mu
	lastSweep int64
	swept     bool // lastSweep is set
}

type bucket struct {
	tat atomic.Int64 // when the bucket is full again, on the limiter's clock
}

func (t *rateBuckets) get(key string, now int64) *bucket {
	if v, ok := t.m.Load(key); ok {
		return v.(*bucket)
	}
	return t.add(key, now)
}

func (t *rateBuckets) add(key string, now int64) *bucket {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.m.Load(key); ok { // added while we waited for mu
		return v.(*bucket)
	}
	if t.n >= t.max {
		t.makeRoom(now)
	}
	b := &bucket{} // tat 0: full
	t.m.Store(key, b)
	t.n++
	return b
}

// makeRoom drops the full buckets, or else one arbitrary bucket; under mu.
func (t *rateBuckets) makeRoom(now int64) {
	if !t.swept || now-t.lastSweep >= t.sweepEvery {
		t.lastSweep, t.swept = now, true
		t.m.Range(func(k, v any) bool {
			if v.(*bucket).tat.Load() <= now {
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

// retryAfter is what a client should wait: wait rounded up to the second
// from one second on, below it to the millisecond, at least one.
func retryAfter(wait time.Duration) time.Duration {
	unit := time.Millisecond
	if wait > time.Second {
		unit = time.Second
	}
	return max((wait + unit - 1).Truncate(unit), time.Millisecond)
}

// rateLimited is the public rejection of a call over its rate.
func rateLimited(after time.Duration) *toolctx.CallResult {
	return toolctx.ErrorResult(errs.RateLimited("too many calls: retry after " + after.String()).
		WithDetail(map[string]any{"retry_after_ms": after.Milliseconds()}))
}
