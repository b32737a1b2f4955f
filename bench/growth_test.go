package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// passthrough is the cheapest interceptor: it calls the next handler.
func passthrough(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return next.CallTool(ctx, req)
	})
}

var sizes = []struct {
	name string
	n    int
}{{"100B", 100}, {"10KB", 10 << 10}, {"100KB", 100 << 10}, {"1MB", 1 << 20}}

// BenchmarkGrowth is how the cost grows:
//
//   - length: a chain of n pass-through interceptors, and of n no-op After
//     hooks (each reads the clock twice), around a trivial handler;
//   - size: tools/call whose argument and result are the same string of
//     100 B to 1 MB, bare and with toolmw's full chain, through go-sdk
//     in-memory and mcp-go in-process;
//   - concurrency: the full chain (audit into an async writer) around a
//     trivial handler from 1 to 64 goroutines (RunParallel with
//     b.SetParallelism; ns/op is wall time per call across all of them),
//     with dropped-%, the share of the calls' rows the writer dropped
//     because its queue was full (a row dropped is work not done: a flat
//     curve with drops is not a flat cost).
//
// Every row reports cpu-ns/op, the process CPU time per call with the audit
// writer's work included (it is closed before the CPU time is read).
func BenchmarkGrowth(b *testing.B) {
	for _, n := range []int{1, 2, 4, 8, 16} {
		b.Run(fmt.Sprintf("length/passthrough/n=%d", n), func(b *testing.B) {
			ms := make([]toolctx.Middleware, n)
			for i := range ms {
				ms[i] = passthrough
			}
			h, _ := middleware.New(ms...).Then(okHandler)
			loop(b, h)
		})
	}
	for _, n := range []int{1, 2, 4, 8, 16} {
		b.Run(fmt.Sprintf("length/after/n=%d", n), func(b *testing.B) {
			ms := make([]toolctx.Middleware, n)
			for i := range ms {
				ms[i] = noopAfter
			}
			h, _ := middleware.New(ms...).Then(okHandler)
			loop(b, h)
		})
	}
	for _, sz := range sizes {
		payload := strings.Repeat("a", sz.n)
		for _, way := range []string{wayBare, wayToolmw} {
			b.Run(fmt.Sprintf("size/sdk-in-memory/%s/%s", sz.name, way), func(b *testing.B) {
				s, drain := sdkServerDrain(b, way, toolctx.TransportInMemory)
				cs := sdkInMemory(b, s)
				params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"q":"` + payload + `"}`)}
				b.SetBytes(int64(sz.n))
				sdkSessions(b, []*mcp.ClientSession{cs}, params, drain)
			})
		}
		for _, way := range []string{wayBare, wayToolmw} {
			b.Run(fmt.Sprintf("size/mcpgo-in-process/%s/%s", sz.name, way), func(b *testing.B) {
				s, drain := mcpgoServerDrain(b, way, mcpgoEcho)
				c := mcpgoInProcess(b, s)
				b.SetBytes(int64(sz.n))
				mcpgoSessions(b, []*client.Client{c}, mcpgoRequest(map[string]any{"q": payload}), drain)
			})
		}
	}
	for _, c := range []int{1, 2, 8, 16, 64} {
		b.Run(fmt.Sprintf("concurrency/goroutines=%d", c), func(b *testing.B) {
			w := newAsync(b, discardSink, audit.AsyncConfig{QueueSize: 1 << 16, BatchSize: 1024, Policy: audit.Drop})
			h, _ := fullChain(w).Then(okHandler)
			if c == 1 {
				loop(b, h, closer(w))
			} else {
				ctx := context.Background()
				b.ReportAllocs()
				b.SetParallelism(parallelism(c))
				b.ResetTimer()
				cpu := startCPU(b)
				b.RunParallel(func(pb *testing.PB) {
					req := *chainReq
					for pb.Next() {
						resultSink = h.CallTool(ctx, &req)
					}
				})
				cpu.stop(closer(w))
			}
			b.ReportMetric(100*float64(w.Stats().Dropped)/float64(b.N), "dropped-%")
		})
	}
}
