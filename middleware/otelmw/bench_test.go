package otelmw_test

import (
	"context"
	"net/http"
	"syscall"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

var (
	benchResult = toolctx.TextResult("ok")
	benchSink   *toolctx.CallResult
)

// discard is a span processor that drops every span: the recording cost is
// the interceptor's and the SDK's, not an exporter's.
type discard struct{}

func (discard) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discard) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discard) Shutdown(context.Context) error                  { return nil }
func (discard) ForceFlush(context.Context) error                { return nil }

// fullChain is the recommended chain (audit, diagnostics, normalize,
// recover) around a handler that succeeds, with otel outermost when given.
func fullChain(b *testing.B, otel toolctx.Middleware) toolctx.Handler {
	b.Helper()
	ms := []toolctx.Middleware{
		audit.Interceptor(audit.EmitterFunc(func(context.Context, audit.Record) {})),
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	}
	if otel != nil {
		ms = append([]toolctx.Middleware{otel}, ms...)
	}
	h, err := middleware.New(ms...).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return benchResult })
	if err != nil {
		b.Fatal(err)
	}
	return h
}

func benchRequests() map[string]*toolctx.Request {
	return map[string]*toolctx.Request{
		// What the go-sdk adapter fills for an in-memory call of a
		// 2026-07-28 client.
		"in-memory": {Tool: "greet", CallID: "a1b2c3d4e5f6-1", Transport: toolctx.TransportInMemory,
			Meta: map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
		// Streamable HTTP with a session, the protocol header and the
		// client's traceparent in _meta.
		"http+traceparent": {Tool: "greet", CallID: "a1b2c3d4e5f6-2", Transport: toolctx.TransportStreamableHTTP, SessionID: "IDVJP3UMOPW5E5R56AGZBFBBCZ",
			Header: http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Content-Type": {"application/json"}},
			Meta:   map[string]any{"traceparent": traceparent}},
	}
}

func run(b *testing.B, h toolctx.Handler, req *toolctx.Request) {
	ctx := context.Background()
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		benchSink = h.CallTool(ctx, req)
	}
	reportCPU(b, cpu)
}

// cpuTime is the process's user and system CPU time. The machine that
// runs the benchmarks is shared: wall time per op includes the time the
// benchmark waited for a CPU, the process's CPU time does not (it does
// include the GC's background work, which is part of the cost).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since before, as cpu-ns/op.
func reportCPU(b *testing.B, before time.Duration) {
	if before == 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
}

// BenchmarkChain measures the full chain without otelmw, with otelmw over
// the no-op providers, and with a recording tracer (sampling every span,
// into a discarding processor) and an SDK meter: the differences are what
// the interceptor adds.
func BenchmarkChain(b *testing.B) {
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	for name, req := range benchRequests() {
		b.Run(name+"/without", func(b *testing.B) { run(b, fullChain(b, nil), req) })
		b.Run(name+"/noop", func(b *testing.B) {
			otel, err := otelmw.New(otelmw.WithTracerProvider(tracenoop.NewTracerProvider()), otelmw.WithMeterProvider(metricnoop.NewMeterProvider()), otelmw.WithPropagator(prop))
			if err != nil {
				b.Fatal(err)
			}
			run(b, fullChain(b, otel), req)
		})
		b.Run(name+"/recording", func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discard{}))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()
			otel, err := otelmw.New(otelmw.WithTracerProvider(tp), otelmw.WithMeterProvider(mp), otelmw.WithPropagator(prop))
			if err != nil {
				b.Fatal(err)
			}
			run(b, fullChain(b, otel), req)
		})
		b.Run(name+"/unsampled", func(b *testing.B) {
			// A sampler that records no span: the span is not recording,
			// so none of its attributes are computed; the metric still is.
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(discard{}))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()
			otel, err := otelmw.New(otelmw.WithTracerProvider(tp), otelmw.WithMeterProvider(mp), otelmw.WithPropagator(prop))
			if err != nil {
				b.Fatal(err)
			}
			run(b, fullChain(b, otel), req)
		})
	}
}

// BenchmarkSDKFloor is what the OpenTelemetry SDK itself costs for one
// such call, without toolmw (sdkFloor: the trace context extracted when
// the call has one, a span started with otelmw's attributes and ended, one
// measurement with a precomputed attribute set). BenchmarkOverhead compares
// the three in the same run.
func BenchmarkSDKFloor(b *testing.B) {
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	for name, req := range benchRequests() {
		b.Run(name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discard{}))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()
			f := newSDKFloor(b, tp, mp, prop, req)
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				f.call(ctx)
			}
			reportCPU(b, cpu)
		})
	}
}
