package otelmw

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// recorded is an interceptor over a real SDK pipeline, with its state.
type recorded struct {
	in     *interceptor
	h      toolctx.Handler
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newRecorded(t *testing.T, next toolctx.HandlerFunc, opts ...Option) *recorded {
	t.Helper()
	r := &recorded{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	m, err := New(append([]Option{WithTracerProvider(tp), WithMeterProvider(mp), WithPropagator(propagation.TraceContext{})}, opts...)...)
	require.NoError(t, err, "New")
	h, ok := m(next).(handler)
	require.True(t, ok, "New wraps in its handler")
	r.in, r.h = h.in, h
	return r
}

func (r *recorded) points(t *testing.T) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm), "collect")
	require.Len(t, rm.ScopeMetrics, 1, "one scope")
	return rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Histogram[float64]).DataPoints
}

// Names invented by the client for tools that do not exist do not fill the
// cache of series: an unknown tool's series is dropped after its call, and
// its failures share one series without the name.
func TestUnknownToolsDoNotFillTheCache(t *testing.T) {
	r := newRecorded(t, func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		if req.Tool == "known" {
			return toolctx.TextResult("ok")
		}
		return toolctx.ErrorResult(errs.UnknownTool(req.Tool))
	})
	for i := range 200 {
		r.h.CallTool(context.Background(), &toolctx.Request{Tool: fmt.Sprintf("invented-%d", i)})
	}
	r.h.CallTool(context.Background(), &toolctx.Request{Tool: "known"})
	assert.Equal(t, int64(2), r.in.series.n.Load(), "the known tool's series and one series for every unknown tool's failure")
	assert.Len(t, r.points(t), 2, "two series in the metric: the known tool, and the unknown tools without a name")
	assert.Equal(t, "tools/call", r.spans.Ended()[0].Name(), "an unknown tool's span is not named after it")
}

// Past the cache's bound a series is computed on every call, with the same
// attributes a cached one has.
func TestSeriesPastTheBound(t *testing.T) {
	r := newRecorded(t, func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	for i := 0; r.in.series.n.Load() < maxCached; i++ {
		r.in.seriesOf(seriesKey{tool: fmt.Sprintf("filler-%d", i)})
	}
	req := &toolctx.Request{Tool: "late", CallID: "c-1", Transport: toolctx.TransportStdio,
		Meta: map[string]any{metaProtocolVersion: "2025-11-25"}}
	r.h.CallTool(context.Background(), req)
	r.h.CallTool(context.Background(), req)
	_, cached := r.in.series.get(seriesKey{tool: "late", version: "2025-11-25", transport: toolctx.TransportStdio})
	assert.False(t, cached, "the cache is full: the series is not kept")
	spans := r.spans.Ended()
	require.Len(t, spans, 2, "two spans")
	for _, s := range spans {
		assert.Equal(t, "tools/call late", s.Name(), "the span's name")
		got := map[string]string{}
		for _, kv := range s.Attributes() {
			got[string(kv.Key)] = kv.Value.String()
		}
		assert.Equal(t, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "late",
			"mcp.protocol.version": "2025-11-25", "network.transport": "pipe", "toolmw.call.id": "c-1",
		}, got, "every attribute, uncached as cached")
	}
	var late []metricdata.HistogramDataPoint[float64]
	for _, p := range r.points(t) {
		if v, ok := p.Attributes.Value(keyToolName); ok && v.AsString() == "late" {
			late = append(late, p)
		}
	}
	require.Len(t, late, 1, "both calls in one series of the metric")
	assert.Equal(t, uint64(2), late[0].Count, "two measurements")
}

// countingPropagator counts extractions, and reads a reserved _meta key as
// well as the W3C ones.
type countingPropagator struct {
	propagation.TraceContext
	extracts int
	reserved string
}

func (p *countingPropagator) Extract(ctx context.Context, c propagation.TextMapCarrier) context.Context {
	p.extracts++
	p.reserved = c.Get(metaProtocolVersion)
	return p.TraceContext.Extract(ctx, c)
}

// The trace context is extracted from _meta only when _meta may hold a key
// a propagator reads: not for a _meta that holds only the protocol version
// (what a 2026-07-28 client sends with every call). The carrier never
// shows a reserved key.
func TestExtractOnlyWhenMetaMayCarryContext(t *testing.T) {
	prop := &countingPropagator{}
	r := newRecorded(t, func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") },
		WithPropagator(prop))
	call := func(meta map[string]any) {
		r.h.CallTool(context.Background(), &toolctx.Request{Tool: "t", Meta: meta})
	}
	call(nil)
	call(map[string]any{metaProtocolVersion: "2026-07-28"})
	assert.Zero(t, prop.extracts, "nothing to read: no extraction")
	call(map[string]any{metaProtocolVersion: "not a revision"})
	assert.Equal(t, 1, prop.extracts, "a key that is not a revision is still a key: extracted")
	assert.Empty(t, prop.reserved, "the carrier does not show a reserved key")
	call(map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	call(map[string]any{metaProtocolVersion: "2026-07-28", "x-vendor-trace": "1"})
	assert.Equal(t, 3, prop.extracts, "a key a propagator may read: extracted")
	spans := r.spans.Ended()
	require.Len(t, spans, 5, "five spans")
	assert.Equal(t, "00f067aa0ba902b7", spans[3].Parent().SpanID().String(), "the traceparent is the parent")
}
