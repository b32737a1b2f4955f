package middleware_test

import (
	"context"
	mrand "math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// The admitted path of the guards, alone around a handler that returns a
// shared result: what each guard adds to a call it lets through.
//
//	go test -run '^$' -bench 'Admitted' -benchmem ./middleware/

var benchOK = toolctx.TextResult("ok")

func benchGuard(b *testing.B, m toolctx.Middleware, req *toolctx.Request) {
	h := m(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return benchOK }))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if h.CallTool(ctx, req) != benchOK {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkRateLimitAdmitted(b *testing.B) {
	benchGuard(b, middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Limit(1e12), Burst: 1 << 30}),
		&toolctx.Request{Tool: "search", Identity: &toolctx.Identity{Subject: "alice"}})
}

func BenchmarkRateLimitAdmittedParallel(b *testing.B) {
	m := middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Limit(1e12), Burst: 1 << 30})
	h := m(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return benchOK }))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := &toolctx.Request{Tool: "search", Identity: &toolctx.Identity{Subject: "alice"}}
		for pb.Next() {
			h.CallTool(context.Background(), req)
		}
	})
}

func BenchmarkMaxArgBytesAdmitted(b *testing.B) {
	benchGuard(b, middleware.MaxArgBytes(1024), &toolctx.Request{Tool: "search", Arguments: toolctx.RawArguments([]byte(`{"q":"x"}`))})
}

func BenchmarkBulkheadAdmitted(b *testing.B) {
	benchGuard(b, middleware.Bulkhead(middleware.BulkheadConfig{Limit: 64}), &toolctx.Request{Tool: "export"})
}

func BenchmarkBulkheadPerKeyAdmitted(b *testing.B) {
	benchGuard(b, middleware.Bulkhead(middleware.BulkheadConfig{Limit: 64, Key: middleware.CallerKey}),
		&toolctx.Request{Tool: "export", Identity: &toolctx.Identity{Subject: "alice"}})
}

func BenchmarkRequireScopesAdmitted(b *testing.B) {
	benchGuard(b, middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"deploy": {"deploy:prod"}}}),
		&toolctx.Request{Tool: "deploy", Identity: &toolctx.Identity{Subject: "alice", Scopes: []string{"read", "deploy:prod"}}})
}

// BenchmarkRateLimiterBare is the floor RateLimit stood on while its
// buckets were golang.org/x/time/rate's: one such bucket and a clock read,
// no key, no table.
func BenchmarkRateLimiterBare(b *testing.B) {
	lim := rate.NewLimiter(rate.Limit(1e12), 1<<30)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !lim.AllowN(time.Now(), 1) {
			b.Fatal("rejected")
		}
	}
}

// BenchmarkRateLimitVsXTimeRate compares, in the same loop, RateLimit's
// admitted path with the floor it used to stand on (one x/time/rate
// Limiter.AllowN at time.Now, no key, no table): in every round, in a new
// random order, a batch of each, timed by the thread's CPU clock (the
// -cpu-ns metrics: not the time spent waiting for a core on a loaded
// machine) and by wall time (-ns).
func BenchmarkRateLimitVsXTimeRate(b *testing.B) {
	next := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return benchOK })
	lim := rate.NewLimiter(rate.Limit(1e12), 1<<30)
	ways := [2]toolctx.Handler{
		middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Limit(1e12), Burst: 1 << 30})(next),
		toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if lim.AllowN(time.Now(), 1) {
				return benchOK
			}
			return nil
		}),
	}
	req := &toolctx.Request{Tool: "search", Identity: &toolctx.Identity{Subject: "alice"}}
	ctx := context.Background()
	runtime.LockOSThread() // the thread's CPU clock is the goroutine's
	defer runtime.UnlockOSThread()
	rng := mrand.New(mrand.NewPCG(1, 2))
	order := [2]int{0, 1}
	var cpu, wall [2]time.Duration
	const batch = 256
	calls := 0
	b.ReportAllocs()
	for b.Loop() {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, j := range order {
			h := ways[j]
			c0, w0 := threadCPU(), time.Now()
			for range batch {
				if h.CallTool(ctx, req) != benchOK {
					b.Fatal("rejected")
				}
			}
			wall[j] += time.Since(w0)
			cpu[j] += threadCPU() - c0
		}
		calls += batch
	}
	for j, name := range []string{"ratelimit", "xtimerate"} {
		b.ReportMetric(float64(cpu[j])/float64(calls), name+"-cpu-ns")
		b.ReportMetric(float64(wall[j])/float64(calls), name+"-ns")
	}
}

// ScrubSecrets' cost per KB of output: clean text (the common case: only
// the hints are searched), text with one secret in each KB, and a clean
// structured result (its JSON is searched for the hints).
func benchScrub(b *testing.B, res *toolctx.CallResult, size int) {
	h := middleware.ScrubSecrets(middleware.ScrubConfig{})(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return res }))
	req := &toolctx.Request{Tool: "logs"}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.CallTool(context.Background(), req)
	}
}

func cleanKB(n int) string {
	line := "2026-12-01T09:00:00Z INFO request served path=/api/v1/items status=200 bytes=5120 took=12ms\n"
	return strings.Repeat(line, n*1024/len(line)+1)[:n*1024]
}

func BenchmarkScrubClean1KB(b *testing.B) {
	benchScrub(b, toolctx.TextResult(cleanKB(1)), 1024)
}

func BenchmarkScrubClean64KB(b *testing.B) {
	benchScrub(b, toolctx.TextResult(cleanKB(64)), 64*1024)
}

func BenchmarkScrubSecret1KB(b *testing.B) {
	text := cleanKB(1)[:900] + " dial postgres://svc:hunter2@db:5432/x Bearer eyJhbGciOiJIUzI1NiJ9.x.y\n"
	benchScrub(b, toolctx.TextResult(text), len(text))
}

func BenchmarkScrubStructuredClean1KB(b *testing.B) {
	benchScrub(b, toolctx.StructuredResult(map[string]any{"log": cleanKB(1)}), 2*1024)
}
