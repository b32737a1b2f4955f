package otelmw

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// The names of the OpenTelemetry MCP semantic conventions (status
// Development). Sources, read on 2026-12-01:
//
//   - [MCP] github.com/open-telemetry/semantic-conventions-genai,
//     model/mcp/spans.yaml (9cebdaa), common.yaml (997a19c),
//     metrics.yaml (14567fa), registry.yaml (4172e39) and
//     docs/gen-ai/mcp.md (1e01e83);
//   - [SC] go.opentelemetry.io/otel/semconv/v1.41.0, the last semconv
//     package of the Go API that still has the MCP names (the conventions
//     moved to the genai repository after 1.41, and semconv v1.42.0 and
//     later no longer carry them). Where it has a name, the constant below
//     is its constant.
const (
	// keyMethodName is mcp.method.name, required on spans and the metric
	// [MCP common.yaml] [SC].
	keyMethodName = semconv.McpMethodNameKey
	// keyProtocolVersion is mcp.protocol.version, recommended
	// [MCP common.yaml] [SC].
	keyProtocolVersion = semconv.McpProtocolVersionKey
	// keySessionID is mcp.session.id, recommended on spans when the call is
	// part of a session, and MUST NOT be set for a 2026-07-28-and-later
	// session [MCP registry.yaml, mcp.session.id note] [SC].
	keySessionID = semconv.McpSessionIDKey
	// keyToolName is gen_ai.tool.name, conditionally required when the
	// operation concerns a tool [MCP common.yaml] [SC].
	keyToolName = semconv.GenAIToolNameKey
	// keyErrorType is error.type, conditionally required if and only if the
	// operation fails: the JSON-RPC code as a string for a JSON-RPC error,
	// tool_error for a CallToolResult with isError [MCP common.yaml] [SC].
	keyErrorType = semconv.ErrorTypeKey
	// keyRPCStatusCode is rpc.response.status_code, conditionally required
	// if the response contains an error code [MCP common.yaml] [SC].
	keyRPCStatusCode = semconv.RPCResponseStatusCodeKey
	// keyJSONRPCRequestID is jsonrpc.request.id, conditionally required
	// when the client executes a request [MCP spans.yaml] [SC]. Neither
	// SDK exposes the id to middleware (DESIGN.md, "Facts about the
	// SDKs"): it is not set. toolmw.call.id ([KeyCallID]) identifies the
	// call instead.
	// keyNetworkProtocolName is network.protocol.name, recommended when
	// applicable: http on the HTTP transports [MCP common.yaml] [SC].
	keyNetworkProtocolName = semconv.NetworkProtocolNameKey
	// keyClientAddress and keyClientPort are client.address and
	// client.port, recommended on the server span [MCP spans.yaml] [SC].
	keyClientAddress = semconv.ClientAddressKey
	keyClientPort    = semconv.ClientPortKey
	// keyToolCallArguments and keyToolCallResult are
	// gen_ai.tool.call.arguments and gen_ai.tool.call.result, opt-in on
	// the server span (they may hold sensitive data) [MCP spans.yaml] [SC].
	keyToolCallArguments = semconv.GenAIToolCallArgumentsKey
	keyToolCallResult    = semconv.GenAIToolCallResultKey

	// keyExceptionType, keyExceptionMessage and keyExceptionStacktrace are
	// the attributes of the span event "exception" [SC exception.go].
	keyExceptionType       = semconv.ExceptionTypeKey
	keyExceptionMessage    = semconv.ExceptionMessageKey
	keyExceptionStacktrace = semconv.ExceptionStacktraceKey
)

// toolmw's own attributes, in its own namespace (not conventions).
const (
	// KeyErrorCode is toolmw.error.code: the stable public code of a
	// failed call (errs.Code), on the span and the metric.
	KeyErrorCode = attribute.Key("toolmw.error.code")
	// KeyCallID is toolmw.call.id: the call's correlation id
	// (toolctx.Request.CallID), on the span only, as in the audit row.
	KeyCallID = attribute.Key("toolmw.call.id")
	// KeyGuard is toolmw.guard: the name of the guard a call's
	// toolmw.guard.would_reject measurement is for (the value of
	// middleware.NoteWouldReject: rate_limit, bulkhead, ...).
	KeyGuard = attribute.Key("toolmw.guard")
	// KeyCacheResult is toolmw.cache.result: "hit" or "miss", the
	// middleware.NoteCache note of a call toolmw.cache.lookups counts.
	KeyCacheResult = attribute.Key("toolmw.cache.result")
)

// Values.
const (
	// methodToolsCall is the mcp.method.name of a tool call [MCP
	// registry.yaml] [SC McpMethodNameToolsCall].
	methodToolsCall = "tools/call"
	// metricName is the histogram of operations on the server side, unit
	// seconds [MCP metrics.yaml] [SC mcpconv.ServerOperationDuration].
	metricName = "mcp.server.operation.duration"
	// metricSessionName is the histogram of sessions on the server side,
	// unit seconds, with the same bucket boundaries [MCP metrics.yaml;
	// docs/gen-ai/mcp.md, "Metric: mcp.server.session.duration"] [SC
	// mcpconv.ServerSessionDuration].
	metricSessionName = "mcp.server.session.duration"
	// errorTypeOther is the conventions' fallback error.type [SC
	// ErrorTypeOther].
	errorTypeOther = "_OTHER"
	// metricWouldReject is toolmw's own counter of the calls an observed
	// guard would have stopped (not conventions).
	metricWouldReject = "toolmw.guard.would_reject"
	// metricCacheLookups is toolmw's own counter of the calls
	// middleware.Cache looked up, by hit or miss (not conventions).
	metricCacheLookups = "toolmw.cache.lookups"
	// errorTypeToolError is error.type for an isError CallToolResult
	// [MCP common.yaml, error.type note].
	errorTypeToolError = "tool_error"
	// protocolWithoutSessions is the first MCP revision without
	// protocol-level sessions: mcp.session.id MUST NOT be set for it and
	// later ones [MCP registry.yaml, mcp.session.id note].
	protocolWithoutSessions = "2026-07-28"
	// eventException is the name of the span event of a recorded error
	// [SC exception.go; the trace API's RecordError uses it too].
	eventException = "exception"
	// metaProtocolVersion is the _meta key under which clients of protocol
	// 2026-07-28 send their protocol version (go-sdk v1.8
	// mcp.MetaKeyProtocolVersion), and headerProtocolVersion the HTTP
	// header every HTTP request after initialization carries (MCP
	// 2025-06-18 and later, basic/transports).
	metaProtocolVersion   = "io.modelcontextprotocol/protocolVersion"
	headerProtocolVersion = "Mcp-Protocol-Version"
)

// bucketBoundaries are the explicit bucket boundaries, in seconds, that
// mcp.server.operation.duration SHOULD be specified with
// [MCP docs/gen-ai/mcp.md, "Metric: mcp.server.operation.duration"].
var bucketBoundaries = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// BucketBoundaries returns a copy of the histogram's bucket boundaries, in
// seconds, as the conventions give them.
func BucketBoundaries() []float64 { return append([]float64(nil), bucketBoundaries...) }

// notAnError reports whether a JSON-RPC error code is a rejection that the
// span and metric must not mark as an error: parse error (-32700), invalid
// request (-32600), method not found (-32601), invalid params (-32602, also
// an unknown tool) and resource not found (-32002). The list is issue 17's,
// given there as the conventions' rule; the revisions of model/mcp named
// above state error.type for JSON-RPC errors without this list, so it is
// applied as the issue states it. rpc.response.status_code still records
// the code.
func notAnError(code int) bool {
	switch code {
	case -32700, -32600, -32601, -32602, -32002:
		return true
	}
	return false
}
