package middleware_test

import (
	"context"
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
	benchGuard(b, middleware.MaxArgBytes(1024), &toolctx.Request{Tool: "search", Arguments: []byte(`{"q":"x"}`)})
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

// BenchmarkRateLimiterBare is the floor RateLimit stands on: one
// golang.org/x/time/rate bucket and a clock read, no key, no table.
func BenchmarkRateLimiterBare(b *testing.B) {
	lim := rate.NewLimiter(rate.Limit(1e12), 1<<30)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !lim.AllowN(time.Now(), 1) {
			b.Fatal("rejected")
		}
	}
}
