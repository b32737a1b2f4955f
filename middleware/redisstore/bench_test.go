package redisstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// What the Redis-backed rate limiter adds to a call, next to the
// in-process one and to the physical floor, one EVALSHA round trip of a
// script that does nothing: p50 and p99 per call, one caller at a time.
//
//	TOOLMW_TEST_REDIS_URL=redis://127.0.0.1:6379/0 go test -run '^$' -bench 'Latency' -benchtime 20000x ./middleware/redisstore/

// latencies runs f b.N times and reports its p50 and p99.
func latencies(b *testing.B, f func()) {
	b.Helper()
	d := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		f()
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99-ns")
}

var noop = redis.NewScript(`return 1`)

func BenchmarkLatencyEvalSHAFloor(b *testing.B) {
	s := testStore(b)
	ctx := context.Background()
	if err := noop.Load(ctx, s.rdb).Err(); err != nil {
		b.Fatal(err)
	}
	latencies(b, func() {
		if err := s.rdb.EvalSha(ctx, noop.Hash(), []string{s.prefix + "floor"}).Err(); err != nil {
			b.Fatal(err)
		}
	})
}

func benchLimiter(b *testing.B, cfg middleware.RateLimitConfig) {
	cfg.Rate, cfg.Burst = rate.Limit(1e6), 1<<30 // every call admitted: the admitted path
	ok := toolctx.TextResult("ok")
	h := middleware.RateLimit(cfg)(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return ok }))
	req := request("alice")
	ctx := context.Background()
	latencies(b, func() {
		if h.CallTool(ctx, req) != ok {
			b.Fatal("rejected, or the store failed")
		}
	})
}

func BenchmarkLatencyRateLimitRedis(b *testing.B) {
	s := testStore(b)
	benchLimiter(b, middleware.RateLimitConfig{Store: s, StorePolicy: middleware.StorePolicy{Name: "bench", Timeout: time.Second}})
}

func BenchmarkLatencyRateLimitInProcess(b *testing.B) {
	benchLimiter(b, middleware.RateLimitConfig{})
}

// BenchmarkLatencyInterleaved runs, call by call and in turn (each first
// a third of the time, so that all three see the same machine: a busy one
// moves every figure), the floor, the store's TakeToken alone (the script,
// with the guard's deadline) and the Redis-backed RateLimit around a
// handler: p50 and p99 of each, and the limiter's p50 over the floor's.
func BenchmarkLatencyInterleaved(b *testing.B) {
	s := testStore(b)
	ctx := context.Background()
	if err := noop.Load(ctx, s.rdb).Err(); err != nil {
		b.Fatal(err)
	}
	ok := toolctx.TextResult("ok")
	h := middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Limit(1e6), Burst: 1 << 30, Store: s,
		StorePolicy: middleware.StorePolicy{Name: "bench", Timeout: time.Second}})(
		toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return ok }))
	req := request("alice")
	shape := middleware.RateBucket{Interval: time.Microsecond, Burst: 1 << 30}
	var floor, store, limiter []time.Duration
	calls := []func(){
		func() {
			start := time.Now()
			if err := s.rdb.EvalSha(ctx, noop.Hash(), []string{s.prefix + "floor"}).Err(); err != nil {
				b.Fatal(err)
			}
			floor = append(floor, time.Since(start))
		},
		func() {
			start := time.Now()
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			_, admitted, err := s.TakeToken(sctx, "bench-store", shape)
			cancel()
			if err != nil || !admitted {
				b.Fatal("rejected, or the store failed: ", err)
			}
			store = append(store, time.Since(start))
		},
		func() {
			start := time.Now()
			if h.CallTool(ctx, req) != ok {
				b.Fatal("rejected, or the store failed")
			}
			limiter = append(limiter, time.Since(start))
		},
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for j := range calls {
			calls[(i+j)%len(calls)]()
		}
		i++
	}
	b.StopTimer()
	p := func(d []time.Duration, q int) float64 {
		slices.Sort(d)
		return float64(d[len(d)*q/100].Nanoseconds())
	}
	b.ReportMetric(p(floor, 50), "floor-p50-ns")
	b.ReportMetric(p(floor, 99), "floor-p99-ns")
	b.ReportMetric(p(store, 50), "store-p50-ns")
	b.ReportMetric(p(store, 99), "store-p99-ns")
	b.ReportMetric(p(limiter, 50), "limiter-p50-ns")
	b.ReportMetric(p(limiter, 99), "limiter-p99-ns")
	b.ReportMetric(p(limiter, 50)/p(floor, 50), "p50-ratio")
}
