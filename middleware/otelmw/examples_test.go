package otelmw_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

// The interceptor goes outermost in the chain; the audit row inside it
// records the span's ids. A real server passes its exporting providers (or
// sets the global ones); this one keeps the spans and metrics in memory.
func ExampleNew() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	otel, err := otelmw.New(
		otelmw.WithTracerProvider(tp),
		otelmw.WithMeterProvider(mp),
		otelmw.WithPropagator(propagation.TraceContext{}),
	)
	if err != nil {
		panic(err)
	}
	var row audit.Record
	chain := middleware.New(
		otel,
		audit.Interceptor(audit.EmitterFunc(func(_ context.Context, r audit.Record) { row = r })),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	h, err := chain.ThenFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(errs.NotFound("order 42 does not exist"))
	})
	if err != nil {
		panic(err)
	}

	h.CallTool(context.Background(), &toolctx.Request{
		Tool: "lookup_order", CallID: "c-1", Transport: toolctx.TransportStdio,
		Meta: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	})

	span := spans.Ended()[0]
	fmt.Println(span.Name(), span.SpanKind())
	for _, kv := range span.Attributes() {
		fmt.Printf("  %s=%s\n", kv.Key, kv.Value.String())
	}
	fmt.Println("status:", span.Status().Code, span.Status().Description)
	fmt.Println("parent:", span.Parent().SpanID())
	fmt.Println("row joins the span:", row.TraceID == span.SpanContext().TraceID().String() && row.SpanID == span.SpanContext().SpanID().String())

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	m := rm.ScopeMetrics[0].Metrics[0]
	fmt.Println(m.Name, m.Unit, m.Data.(metricdata.Histogram[float64]).DataPoints[0].Count)
	// Output:
	// tools/call lookup_order server
	//   mcp.method.name=tools/call
	//   gen_ai.operation.name=execute_tool
	//   gen_ai.tool.name=lookup_order
	//   network.transport=pipe
	//   toolmw.call.id=c-1
	//   toolmw.error.code=not_found
	//   error.type=tool_error
	// status: Error order 42 does not exist
	// parent: 00f067aa0ba902b7
	// row joins the span: true
	// mcp.server.operation.duration s 1
}
