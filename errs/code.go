package errs

// Code is a stable, machine-readable outcome of a tool call.
//
// The codes form a closed set, listed in [Codes]. They are a contract: a code
// is never renamed or given a new meaning, so clients, dashboards and audit
// queries may match on the string. New codes may be added in a minor release.
type Code string

// The codes. The string values are stable.
const (
	// CodeInvalidArguments: the arguments failed the tool's input schema or
	// could not be decoded. The feedback is public.
	CodeInvalidArguments Code = "invalid_arguments"
	// CodeNotFound: something the call refers to does not exist.
	CodeNotFound Code = "not_found"
	// CodeAlreadyExists: the call would create something that exists.
	CodeAlreadyExists Code = "already_exists"
	// CodeFailedPrecondition: the system is not in a state the call needs.
	CodeFailedPrecondition Code = "failed_precondition"
	// CodePermissionDenied: the caller is known but may not do this.
	CodePermissionDenied Code = "permission_denied"
	// CodeUnauthenticated: the caller's identity is missing or invalid.
	CodeUnauthenticated Code = "unauthenticated"
	// CodeRateLimited: the caller sent too many calls; retry later.
	CodeRateLimited Code = "rate_limited"
	// CodeQuotaExceeded: the caller used up a quota that does not refill soon.
	CodeQuotaExceeded Code = "quota_exceeded"
	// CodeTimeout: the call ran past its deadline.
	CodeTimeout Code = "timeout"
	// CodeCanceled: the client cancelled the call.
	CodeCanceled Code = "canceled"
	// CodeUnavailable: a dependency is down; the call may succeed if retried.
	CodeUnavailable Code = "unavailable"
	// CodeUnknownTool: no tool has the requested name (a protocol error).
	CodeUnknownTool Code = "unknown_tool"
	// CodeInvalidRequest: the protocol message itself was malformed (a
	// protocol error).
	CodeInvalidRequest Code = "invalid_request"
	// CodeResultTooLarge: the tool's result was larger than the server
	// lets a result be (middleware.MaxResultBytes); the detail says the
	// limit.
	CodeResultTooLarge Code = "result_too_large"
	// CodeToolError: the handler returned its own isError result; its
	// content is the public message.
	CodeToolError Code = "tool_error"
	// CodeInternal: anything unexpected. The client gets a generic message;
	// the raw cause stays on the server.
	CodeInternal Code = "internal"
)

var allCodes = [...]Code{
	CodeInvalidArguments, CodeNotFound, CodeAlreadyExists, CodeFailedPrecondition,
	CodePermissionDenied, CodeUnauthenticated, CodeRateLimited, CodeQuotaExceeded,
	CodeTimeout, CodeCanceled, CodeUnavailable, CodeUnknownTool, CodeInvalidRequest,
	CodeResultTooLarge, CodeToolError, CodeInternal,
}

// Codes returns every code, in a fixed order. The returned slice is a copy.
func Codes() []Code {
	out := make([]Code, len(allCodes))
	copy(out, allCodes[:])
	return out
}

// Valid reports whether c is one of [Codes].
func (c Code) Valid() bool {
	for _, k := range allCodes {
		if c == k {
			return true
		}
	}
	return false
}

// JSON-RPC 2.0 error codes used by MCP for protocol errors.
const (
	JSONRPCInvalidRequest = -32600
	JSONRPCMethodNotFound = -32601
	JSONRPCInvalidParams  = -32602
	JSONRPCInternalError  = -32603
)

// JSON-RPC error codes in the server-defined range (-32000 to -32099) with
// which toolmw's HTTP layer (middleware/httpmw) answers a request that never
// reached MCP.
const (
	// JSONRPCUnauthenticated answers a request without valid credentials
	// (HTTP 401).
	JSONRPCUnauthenticated = -32001
	// JSONRPCUnavailable answers a request whose credentials could not be
	// checked, the identity provider being down (HTTP 503).
	JSONRPCUnavailable = -32002
	// JSONRPCPermissionDenied answers a request whose valid credentials may
	// not use the server (HTTP 403).
	JSONRPCPermissionDenied = -32003
)

// JSONRPC returns the JSON-RPC error code for c when c is reported as a
// protocol error rather than as an isError tool result, and false when c is
// always reported in a tool result.
//
// The MCP specification reports an unknown tool as -32602 (invalid params)
// and a malformed request as -32600.
func (c Code) JSONRPC() (int, bool) {
	switch c {
	case CodeUnknownTool:
		return JSONRPCInvalidParams, true
	case CodeInvalidRequest:
		return JSONRPCInvalidRequest, true
	case CodeInternal:
		return JSONRPCInternalError, true
	}
	return 0, false
}

// DefaultMessage is the public message used for c when an [Error] has none.
func (c Code) DefaultMessage() string {
	switch c {
	case CodeInvalidArguments:
		return "invalid arguments"
	case CodeNotFound:
		return "not found"
	case CodeAlreadyExists:
		return "already exists"
	case CodeFailedPrecondition:
		return "failed precondition"
	case CodePermissionDenied:
		return "permission denied"
	case CodeUnauthenticated:
		return "unauthenticated"
	case CodeRateLimited:
		return "rate limited: retry later"
	case CodeQuotaExceeded:
		return "quota exceeded"
	case CodeTimeout:
		return "the tool call timed out"
	case CodeCanceled:
		return "the tool call was canceled"
	case CodeUnavailable:
		return "the service is unavailable: retry later"
	case CodeUnknownTool:
		return "unknown tool"
	case CodeInvalidRequest:
		return "invalid request"
	case CodeResultTooLarge:
		return "the tool's result is too large"
	case CodeToolError:
		return "the tool reported an error"
	}
	return GenericMessage
}

// GenericMessage is what the client is told when the cause of a failure is
// not public.
const GenericMessage = "internal error: the tool failed; the cause was recorded on the server"
