// Package otelmw traces and measures every tool call with OpenTelemetry,
// named as the OpenTelemetry semantic conventions for MCP name them, on
// both adapters and every transport. See docs/otel.md for the span's and
// the metrics' attributes, trace context and cost.
//
// It is its own package so that importing middleware or audit builds no
// OpenTelemetry.
//
//	otel, err := otelmw.New() // the global providers and propagator
//	if err != nil {
//		return err
//	}
//	chain := middleware.New(
//		otel, // outermost: the span covers the chain, the audit row gets its ids
//		audit.Interceptor(w),
//		middleware.Diagnostics(report),
//		middleware.Normalize(errs.Normalizer{}),
//		middleware.Recover,
//	)
//
// One SERVER span per call ("tools/call {gen_ai.tool.name}") and the
// histogram mcp.server.operation.duration; [Sessions] records
// mcp.server.session.duration when the server wires it to its SDK's
// session events. By default a span carries the public code and message
// only: [WithRawCause] (and [WithPanicStack]) opt in to the raw cause, and
// arguments and results are recorded only through a redactor
// ([WithArguments], [WithResult]). With the no-op providers [New] returns
// the next handler unchanged.
package otelmw
