package otelmw_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

// sdkFloor is what the OpenTelemetry SDK itself costs for one call of req,
// with no toolmw: the client's trace context extracted from _meta when
// there is one, a SERVER span started with exactly the attributes otelmw
// gives it and ended, and one histogram measurement with exactly the
// metric's attributes, as a precomputed set. The attributes are taken from
// what otelmw recorded for req, so the floor and the interceptor do the
// same work in the SDK.
type sdkFloor struct {
	tracer    trace.Tracer
	hist      metric.Float64Histogram
	prop      propagation.TextMapPropagator
	carrier   propagation.MapCarrier // nil when the call has no trace context
	name      string
	spanAttrs []attribute.KeyValue
	metric    []metric.RecordOption
}

var serverKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

func newSDKFloor(b *testing.B, tp trace.TracerProvider, mp metric.MeterProvider, prop propagation.TextMapPropagator, req *toolctx.Request) *sdkFloor {
	b.Helper()
	// One call through otelmw into a recorder, to read its attributes.
	rec := tracetest.NewSpanRecorder()
	rtp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	rmp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = rtp.Shutdown(context.Background()); _ = rmp.Shutdown(context.Background()) }()
	otel, err := otelmw.New(otelmw.WithTracerProvider(rtp), otelmw.WithMeterProvider(rmp), otelmw.WithPropagator(prop))
	if err != nil {
		b.Fatal(err)
	}
	fullChain(b, otel).CallTool(context.Background(), req)
	spans := rec.Ended()
	if len(spans) != 1 {
		b.Fatalf("want one span, got %d", len(spans))
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		b.Fatal(err)
	}
	pts := rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Histogram[float64]).DataPoints
	if len(pts) != 1 {
		b.Fatalf("want one data point, got %d", len(pts))
	}

	hist, err := mp.Meter("floor").Float64Histogram("mcp.server.operation.duration", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(otelmw.BucketBoundaries()...))
	if err != nil {
		b.Fatal(err)
	}
	f := &sdkFloor{
		tracer:    tp.Tracer("floor"),
		hist:      hist,
		prop:      prop,
		name:      spans[0].Name(),
		spanAttrs: spans[0].Attributes(),
		metric:    []metric.RecordOption{metric.WithAttributeSet(pts[0].Attributes)},
	}
	if tp, ok := req.Meta["traceparent"].(string); ok {
		f.carrier = propagation.MapCarrier{"traceparent": tp}
	}
	return f
}

func (f *sdkFloor) call(ctx context.Context) {
	start := time.Now()
	if f.carrier != nil {
		ctx = f.prop.Extract(ctx, f.carrier)
	}
	sctx, span := f.tracer.Start(ctx, f.name, serverKind...)
	span.SetAttributes(f.spanAttrs...)
	span.End()
	f.hist.Record(sctx, time.Since(start).Seconds(), f.metric...)
}

// BenchmarkOverhead is the figure issue 17 asks for, measured so that a
// shared machine's load falls alike on what is compared: in every round,
// in a new random order, a batch of calls through the full chain without
// otelmw, a batch through the same chain with otelmw outermost (a real SDK
// tracer sampling every span into a discarding processor, an SDK meter
// with a manual reader), and a batch of the SDK's own floor for the same
// call (sdkFloor). It reports each one's mean time per call, as CPU time
// of the benchmark's thread (the -cpu-ns metrics: the time the thread ran,
// not the time it waited for a core, which on a loaded machine is most of
// the wall time) and as wall time (the -ns metrics): without, recording
// and floor, and from them overhead (recording - without: what otelmw adds
// to a call) and share (overhead - floor: what otelmw adds beyond the SDK
// calls it has to make; it includes auditjoin, what audit.Interceptor
// spends recording the span's ids in its row, measured as the chain
// without otelmw in a context that names a span). Allocations are
// BenchmarkChain's and BenchmarkSDKFloor's.
func BenchmarkOverhead(b *testing.B) {
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	for name, req := range benchRequests() {
		b.Run(name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discard{}))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()
			otel, err := otelmw.New(otelmw.WithTracerProvider(tp), otelmw.WithMeterProvider(mp), otelmw.WithPropagator(prop))
			if err != nil {
				b.Fatal(err)
			}
			without, with := fullChain(b, nil), fullChain(b, otel)
			floor := newSDKFloor(b, tp, mp, prop, req)
			ctx := context.Background()
			// The chain without otelmw in a context that names a span, as
			// otelmw's does: what the audit row's join costs the audit
			// interceptor.
			refCtx := toolctx.WithTraceRef(ctx, toolctx.TraceRef{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}})
			ways := [4]func(){
				func() { benchSink = without.CallTool(ctx, req) },
				func() { benchSink = with.CallTool(ctx, req) },
				func() { floor.call(ctx) },
				func() { benchSink = without.CallTool(refCtx, req) },
			}
			wall, cpu := interleaveBatches(b, ways)
			for _, m := range []struct {
				unit string
				v    [4]float64
			}{{"ns", wall}, {"cpu-ns", cpu}} {
				b.ReportMetric(m.v[0], "without-"+m.unit)
				b.ReportMetric(m.v[1], "recording-"+m.unit)
				b.ReportMetric(m.v[2], "floor-"+m.unit)
				b.ReportMetric(m.v[1]-m.v[0], "overhead-"+m.unit)
				b.ReportMetric(m.v[1]-m.v[0]-m.v[2], "share-"+m.unit)
				b.ReportMetric(m.v[3]-m.v[0], "auditjoin-"+m.unit)
			}
		})
	}
}

// batch is how many calls of one way a round times with one pair of clock
// reads.
const batch = 32

// interleaveBatches runs a batch of each way per round, in a new random
// order each round (a fixed seed: the same orders in every count), and
// returns each way's mean wall time and thread CPU time per call. The
// goroutine is locked to its thread for the thread's CPU clock to be its
// own.
func interleaveBatches(b *testing.B, ways [4]func()) (wall, cpu [4]float64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, w := range ways {
		for range batch {
			w() // warm up: caches filled, the SDK's series created
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	order := [4]int{0, 1, 2, 3}
	var totalWall, totalCPU [4]time.Duration
	rounds := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, j := range order {
			w := ways[j]
			c0, start := threadCPU(), time.Now()
			for range batch {
				w()
			}
			totalWall[j] += time.Since(start)
			totalCPU[j] += threadCPU() - c0
		}
		rounds++
	}
	b.StopTimer()
	for j := range ways {
		wall[j] = float64(totalWall[j].Nanoseconds()) / float64(rounds*batch)
		cpu[j] = float64(totalCPU[j].Nanoseconds()) / float64(rounds*batch)
	}
	return wall, cpu
}
