package bench

import (
	"context"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// discardLogger formats every record as text and throws it away: the same
// work a real logger does, without the I/O. Both SDKs' own logging
// middleware and toolmw's sinks log through one of these.
func discardLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// discardSink takes every batch at once without looking at it.
var discardSink = audit.SinkFunc(func(context.Context, []audit.Record) error { return nil })

// newAsync is the audit writer of the full chain: the recommended Drop
// policy (a call never waits for the sink), in front of sink.
func newAsync(tb testing.TB, sink audit.Sink, cfg audit.AsyncConfig) *audit.Async {
	tb.Helper()
	if cfg.FallbackLogger == nil {
		cfg.FallbackLogger = discardLogger()
	}
	if cfg.Fallback == nil {
		cfg.Fallback = discardSink
	}
	w := audit.NewAsync(sink, cfg)
	tb.Cleanup(func() { _ = w.Close(context.Background()) })
	return w
}

// fullChain is toolmw's recommended chain, outermost first: audit into e,
// Diagnostics (logging the raw cause), Normalize, Recover.
func fullChain(e audit.Emitter) middleware.Chain {
	diag := discardLogger()
	return middleware.New(
		audit.Interceptor(e),
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			diag.LogAttrs(ctx, slog.LevelError, "tool failed", slog.String("tool", ev.Details.Tool()), slog.Any("err", ev.Cause()))
		}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
}

// fullChainSlog is fullChain with the audit rows going through an async
// writer into a slog sink that formats each row as text and discards it:
// the same work as the SDKs' own logging middleware, moved off the call.
// The writer is returned so that a benchmark can charge its work (see
// cpuMeter.stop).
func fullChainSlog(tb testing.TB) (toolctx.Middleware, *audit.Async) {
	w := newAsync(tb, audit.NewSlogSink(slog.NewTextHandler(io.Discard, nil)), audit.AsyncConfig{Policy: audit.Drop})
	return fullChain(w).Middleware(), w
}

// fullChainSyncSlog is fullChain with each audit row written on the call,
// synchronously, by a slog sink that formats it as text and discards it
// (audit.Direct): the same kind of work, done at the same time, as the
// SDKs' own logging middleware, so that like is compared with like.
func fullChainSyncSlog() toolctx.Middleware {
	return fullChain(audit.Direct(audit.NewSlogSink(slog.NewTextHandler(io.Discard, nil)), audit.DirectConfig{FallbackLogger: discardLogger()})).Middleware()
}

// cpuTime is the process's user+system CPU time, every thread (getrusage
// RUSAGE_SELF): on a shared machine it does not depend on what else runs,
// and it counts the work a benchmark's background goroutines do (an async
// writer, the garbage collector), which wall time per op on an idle second
// core does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter measures the process CPU time of a benchmark's timed loop and
// reports it as cpu-ns/op. Start it right before the loop (after any
// ResetTimer) with startCPU, and stop it right after.
type cpuMeter struct {
	b  *testing.B
	t0 time.Duration
}

func startCPU(b *testing.B) *cpuMeter { return &cpuMeter{b: b, t0: cpuTime()} }

// stop stops the benchmark's timer, runs drains (each finishes work the
// loop left behind, such as closing an async writer so that its queued
// rows are written: that work is charged to the calls that made it, while
// wall ns/op is not charged the wait), then reports cpu-ns/op: the CPU time
// since startCPU divided by b.N. It returns that CPU time.
func (m *cpuMeter) stop(drains ...func()) time.Duration {
	m.b.StopTimer()
	for _, d := range drains {
		d()
	}
	cpu := cpuTime() - m.t0
	if m.b.N > 0 {
		m.b.ReportMetric(float64(cpu.Nanoseconds())/float64(m.b.N), "cpu-ns/op")
	}
	return cpu
}

// closer is a drain for cpuMeter.stop: it closes w, which writes what is
// queued and stops its goroutines.
func closer(w *audit.Async) func() {
	return func() { _ = w.Close(context.Background()) }
}
