package middleware_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

var (
	benchResult = toolctx.TextResult("ok")
	benchSink   *toolctx.CallResult
	benchDur    time.Duration
	benchEpoch  = time.Now()
	errBenchRaw = errors.New("dial tcp 10.0.0.5:5432: connection refused")
	benchPublic = errs.NotFound("no such record")
)

func benchChain(b *testing.B, h toolctx.Handler, diagCalls *int) toolctx.Handler {
	b.Helper()
	out, err := middleware.New(
		middleware.After(func(context.Context, middleware.CallInfo) {}),
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) { *diagCalls++ }),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	).Then(h)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func runBench(b *testing.B, h toolctx.Handler) {
	ctx := context.Background()
	req := &toolctx.Request{Tool: "bench", CallID: "c1", Transport: toolctx.TransportInMemory}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		benchSink = h.CallTool(ctx, req)
	}
}

// BenchmarkDirect is the floor: the handler called directly.
func BenchmarkDirect(b *testing.B) {
	runBench(b, handlerReturning(benchResult))
}

// BenchmarkTwoClockReads is what After's timing costs by itself.
func BenchmarkTwoClockReads(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		since := time.Since(benchEpoch)
		benchDur = time.Since(benchEpoch) - since
	}
}

// BenchmarkChainSuccess is After(no-op)+Diagnostics+Normalize+Recover
// around a handler returning a preallocated result. Target: at most 150 ns
// and 0 allocations over BenchmarkDirect.
func BenchmarkChainSuccess(b *testing.B) {
	var diag int
	runBench(b, benchChain(b, handlerReturning(benchResult), &diag))
	if diag != 0 {
		b.Fatalf("diagnostics called %d times on success", diag)
	}
}

// BenchmarkChainRawError: a raw error becomes the generic envelope and
// Diagnostics is called. Target: at most 1.5 µs.
func BenchmarkChainRawError(b *testing.B) {
	var diag int
	h := benchChain(b, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(errBenchRaw)
	}), &diag)
	runBench(b, h)
	if diag == 0 {
		b.Fatal("diagnostics not called")
	}
}

// BenchmarkChainPublicError: an explicit public error; no diagnostics.
func BenchmarkChainPublicError(b *testing.B) {
	var diag int
	h := benchChain(b, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(benchPublic)
	}), &diag)
	runBench(b, h)
	if diag != 0 {
		b.Fatal("diagnostics called for a public error")
	}
}

// BenchmarkChainPanic: a panic is recovered (with its stack), scrubbed and
// reported.
func BenchmarkChainPanic(b *testing.B) {
	var diag int
	h := benchChain(b, handlerPanicking("boom"), &diag)
	runBench(b, h)
	if diag == 0 {
		b.Fatal("diagnostics not called")
	}
}

// BenchmarkChainSuccessNoAfter is the chain without After's clock reads:
// Diagnostics+Normalize+Recover, to separate the layers' own cost from
// the timing's.
func BenchmarkChainSuccessNoAfter(b *testing.B) {
	h, err := middleware.New(
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	).Then(handlerReturning(benchResult))
	if err != nil {
		b.Fatal(err)
	}
	runBench(b, h)
}
