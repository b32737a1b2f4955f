package bench

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

var (
	okResult    = toolctx.TextResult("ok")
	errRaw      = errors.New("dial tcp 10.0.0.5:5432: connection refused")
	publicErr   = errs.NotFound("no such record")
	resultSink  *toolctx.CallResult
	durSink     time.Duration
	clockEpoch  = time.Now()
	noopAfter   = middleware.After(func(context.Context, middleware.CallInfo) {})
	chainReq    = &toolctx.Request{Tool: "search", CallID: "c-1", SessionID: "s-1", Transport: toolctx.TransportInMemory}
	okHandler   = toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return okResult })
	rawHandler  = toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.ErrorResult(errRaw) })
	pubHandler  = toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.ErrorResult(publicErr) })
	panicHandle = toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { panic("boom") })
)

// coreChain is issue 2's measured chain: After (a hook doing nothing),
// Diagnostics, Normalize, Recover.
func coreChain(tb testing.TB, h toolctx.Handler, diag *int) toolctx.Handler {
	out, err := middleware.New(
		noopAfter,
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) { *diag++ }),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	).Then(h)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// loop calls h b.N times and reports cpu-ns/op next to ns/op; drains run
// after the loop, before the CPU time is read (see cpuMeter.stop). A
// garbage collection runs before the loop: an async writer allocates its
// queue up front (22 MB for 65,536 rows), and the collection that
// allocation starts would otherwise mark it during the first 100-200 ms
// of calls, a cost of the setup, not of a call, which allocates nothing.
func loop(b *testing.B, h toolctx.Handler, drains ...func()) {
	ctx := context.Background()
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
	cpu := startCPU(b)
	for b.Loop() {
		resultSink = h.CallTool(ctx, chainReq)
	}
	cpu.stop(drains...)
}

// BenchmarkChain is the per-call cost of the core interceptors around a
// trivial handler (issue 2: success at most 150 ns and 0 allocs over
// direct; error path at most 1.5 µs), and of the audit interceptor's
// enqueue (issue 3: at most 100 ns and 0 allocs over audit-baseline).
// Every row reports cpu-ns/op, the process CPU time per call (all
// goroutines): for the rows with an async writer it includes the writer's
// work for the rows the calls made (the writer is closed, so its queue is
// written, before the CPU time is read).
func BenchmarkChain(b *testing.B) {
	b.Run("direct", func(b *testing.B) { loop(b, okHandler) })
	b.Run("clock2", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU(b)
		for b.Loop() {
			since := time.Since(clockEpoch)
			durSink = time.Since(clockEpoch) - since
		}
		cpu.stop()
	})
	for _, c := range []struct {
		name     string
		h        toolctx.Handler
		wantDiag bool
	}{
		{"success", okHandler, false},
		{"public-error", pubHandler, false},
		{"raw-error", rawHandler, true},
		{"panic", panicHandle, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var diag int
			loop(b, coreChain(b, c.h, &diag))
			if (diag > 0) != c.wantDiag {
				b.Fatalf("diagnostics called %d times", diag)
			}
		})
	}
	// audit-baseline is After with a no-op hook; audit is the audit
	// interceptor into an async writer: the difference is building and
	// enqueuing the row.
	b.Run("audit-baseline", func(b *testing.B) {
		h, _ := middleware.New(noopAfter).Then(okHandler)
		loop(b, h)
	})
	b.Run("audit", func(b *testing.B) {
		w := newAsync(b, discardSink, audit.AsyncConfig{QueueSize: 1 << 16, BatchSize: 1024, Policy: audit.Drop})
		h, _ := middleware.New(audit.Interceptor(w)).Then(okHandler)
		loop(b, h, closer(w))
	})
	// audit-reserved-meta is audit with the _meta a 2026-07-28 client sends
	// on every call (the io.modelcontextprotocol/ keys only, which the row
	// leaves out).
	b.Run("audit-reserved-meta", func(b *testing.B) {
		w := newAsync(b, discardSink, audit.AsyncConfig{QueueSize: 1 << 16, BatchSize: 1024, Policy: audit.Drop})
		h, _ := middleware.New(audit.Interceptor(w)).Then(okHandler)
		req := *chainReq
		req.Meta = map[string]any{
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "bench-client", "version": "0"},
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		}
		ctx := context.Background()
		b.ReportAllocs()
		runtime.GC() // see loop
		b.ResetTimer()
		cpu := startCPU(b)
		for b.Loop() {
			resultSink = h.CallTool(ctx, &req)
		}
		cpu.stop(closer(w))
	})
	// full is the recommended chain (audit, Diagnostics, Normalize,
	// Recover) on success, the audit rows going to an async writer into a
	// sink that discards them: the chain the "full chain" targets name.
	b.Run("full", func(b *testing.B) {
		w := newAsync(b, discardSink, audit.AsyncConfig{QueueSize: 1 << 16, BatchSize: 1024, Policy: audit.Drop})
		h, _ := fullChain(w).Then(okHandler)
		loop(b, h, closer(w))
		b.ReportMetric(100*float64(w.Stats().Dropped)/float64(b.N), "dropped-%")
	})
	// full-syncslog is full with each row formatted by a slog text handler
	// on the call, synchronously (audit.Direct into an audit.SlogSink over
	// io.Discard): what a chain costs that logs every call the way the
	// SDKs' own logging middleware does.
	b.Run("full-syncslog", func(b *testing.B) {
		h, _ := middleware.New(fullChainSyncSlog()).Then(okHandler)
		loop(b, h)
	})
}
