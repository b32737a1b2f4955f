// Package otelmw traces and measures every tool call with OpenTelemetry,
// named exactly as the OpenTelemetry semantic conventions for the Model
// Context Protocol name them (semantic-conventions-genai, model/mcp, status
// Development), on both adapters and every transport.
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
// # The span
//
// One SERVER span per call, named "tools/call {gen_ai.tool.name}" ("tools/call"
// for an unknown tool: the name is the client's, not a low-cardinality
// target). Its attributes:
//
//   - mcp.method.name = tools/call; gen_ai.operation.name = execute_tool;
//     gen_ai.tool.name;
//   - mcp.protocol.version: from the _meta key
//     io.modelcontextprotocol/protocolVersion (clients of 2026-07-28), else
//     the Mcp-Protocol-Version header on HTTP; absent when neither says;
//   - mcp.session.id, when the transport has a session and the protocol is
//     older than 2026-07-28 (the conventions forbid it from then on);
//   - network.transport = pipe on stdio, tcp on streamable HTTP and SSE;
//     network.protocol.name = http on those; client.address and
//     client.port when [ClientAddress] wraps the HTTP handler;
//   - toolmw.call.id, the call's correlation id, as in the audit row;
//   - on failure: toolmw.error.code (the stable errs.Code); for an isError
//     result error.type = tool_error and status Error with the public
//     message; for a protocol error (unknown tool, malformed request)
//     rpc.response.status_code with the JSON-RPC code, and, because the
//     conventions do not count -32700, -32600, -32601, -32602 and -32002 as
//     errors, no error.type and an unset status.
//
// jsonrpc.request.id is not set: neither SDK tells middleware the JSON-RPC
// id. The arguments and the result (gen_ai.tool.call.arguments and
// .result, opt-in in the conventions) are recorded only through a redactor
// ([WithArguments], [WithResult]).
//
// # What the span says of the cause
//
// By default the span carries the public code and message only: trace
// backends are often a third party's service, and the one rule is that a
// raw cause stays with the operator. [WithRawCause] opts in to a span event
// "exception" with the raw message for the failures whose message was
// scrubbed; the panic stack is added only with [WithPanicStack] as well.
//
// # Trace context
//
// The span's parent is the client's trace context from params._meta
// (traceparent, tracestate and baggage, unprefixed, per SEP-414 and the
// conventions), read through the propagator; the ambient span of the
// context, if any, is then linked. Without it, the HTTP request's headers
// give the parent (an otelhttp span of the same trace, when there is one,
// is the closer parent). The handler runs in the span's context, baggage
// included.
//
// # The metric
//
// mcp.server.operation.duration, a histogram in seconds with the bucket
// boundaries of the conventions ([BucketBoundaries]), with the
// low-cardinality attributes only: mcp.method.name, gen_ai.operation.name,
// gen_ai.tool.name (not for an unknown tool), mcp.protocol.version,
// network.transport, network.protocol.name, error.type,
// rpc.response.status_code and toolmw.error.code. Never a session or call
// id.
//
// mcp.server.session.duration, the conventions' session histogram (in
// seconds, the same buckets; mcp.protocol.version, network.transport,
// network.protocol.name, and error.type for a session that ended with an
// error), is recorded by [Sessions]: neither SDK tells middleware when a
// session starts and ends, so the server wires [Sessions.Start] and
// [Session.End] to its SDK's session events (ExampleNewSessions does it on
// go-sdk).
//
// toolmw.guard.would_reject, a counter of calls (toolmw's own, not
// conventions), counts the calls a guard in observe mode
// (middleware.Observe) would have rejected or changed: one per
// "would_reject" note of the result, with the attributes mcp.method.name,
// toolmw.guard ([KeyGuard]: rate_limit, bulkhead, max_arg_bytes,
// max_result_bytes, require_scopes, scrub_secrets) and gen_ai.tool.name
// (not for an unknown tool). It is how a rollout is watched: the rate of
// would-be rejections per guard and tool, before the guard enforces.
//
// toolmw.cache.lookups, a counter of calls (toolmw's own), counts the calls
// middleware.Cache looked up: one per "cache" note of the result, with
// mcp.method.name, toolmw.cache.result ([KeyCacheResult]: hit or miss) and
// gen_ai.tool.name. Its hit ratio per tool says whether a TTL pays.
//
// # Joining the audit row
//
// When its span is recording, the interceptor puts the span's ids in the
// call's context ([toolctx.WithTraceRef]); audit.Interceptor inside it
// records them as the row's TraceID and SpanID.
//
// # Cost
//
// With the no-op providers (trace/noop, metric/noop) [New] returns the next
// handler unchanged. Otherwise what depends only on a call's series (tool,
// protocol version, transport: the span's name and constant attributes,
// the metric's attribute set) is computed once and cached, for at most
// 4096 series; a span the sampler does not record gets no attributes, and
// a histogram that is not Enabled (a View that drops it) costs no clock
// read. BENCHMARKS.md has the cost with a recording tracer and meter, next
// to the SDK's own.
package otelmw
