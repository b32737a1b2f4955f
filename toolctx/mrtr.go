package toolctx

import (
	"encoding/json"
	"errors"
)

// The methods of the requests an input-required result may embed.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// InputRequired is the answer of a call that needs more from the client
// before it can finish: a multi-round-trip request of protocol 2026-07-28
// (SEP-2322). The client fulfils Requests (it asks its user, runs a
// sampling request, lists its roots) and calls the tool again, a new
// JSON-RPC request with the same name and arguments, carrying the answers
// ([Request.InputResponses]) and State echoed back verbatim
// ([Request.RequestState]). For a client of an older protocol, the SDK
// fulfils the requests itself with the server-initiated requests that
// client understands and calls the handler again. Each round is a run of
// the chain, except where the SDK's bridge for older clients runs inside
// the adapter (go-sdk): there the rounds are one run of the chain, one
// row, whose handler ran once per round (docs/mrtr.md).
//
// It is neither a success nor a failure: [CallResult.Failed] is false, and
// [CallResult.NeedsInput] is true; interceptors pass it through unchanged
// (nothing is cached, scrubbed, truncated or retried), and the audit row's
// outcome is "input_required".
type InputRequired struct {
	// Requests maps the server's ids (which the client's answers are keyed
	// by) to the requests. An empty map with a State asks the client to
	// retry as it is, later (load shedding).
	Requests map[string]InputRequest
	// State is the opaque requestState the client echoes back. It is the
	// handler's to make and to trust: the client can send anything back,
	// so a state that decides what the call may do must be signed or
	// encrypted with a key the server holds, as the spec requires.
	State string
}

// InputRequest is one request embedded in an input-required result, in the
// protocol's form: a method and its params.
type InputRequest struct {
	// Method is [MethodElicit], [MethodCreateMessage] or [MethodListRoots].
	Method string `json:"method"`
	// Params is the request's params as JSON (the SDK's type for the
	// method, encoded); nil for roots/list.
	Params json.RawMessage `json:"params,omitempty"`
}

// ErrNoInputRequest is the cause of an [InputRequiredResult] built with an
// input request that has no method.
var ErrNoInputRequest = errors.New("toolctx: an input request has no method")

// InputRequiredResult returns the result of a call that needs the client's
// input before it can finish (see [InputRequired]): requests keyed by the
// ids the client's answers will carry, and state, which the client echoes
// back. A request without a method makes it an internal failure whose
// cause is [ErrNoInputRequest]; a nil requests map is an empty one (load
// shedding).
func InputRequiredResult(state string, requests map[string]InputRequest) *CallResult {
	for _, r := range requests {
		if r.Method == "" {
			return ErrorResult(ErrNoInputRequest)
		}
	}
	if requests == nil {
		requests = map[string]InputRequest{}
	}
	return &CallResult{InputRequired: &InputRequired{Requests: requests, State: state}}
}

// NeedsInput reports whether r asks the client for more input before the
// call can finish: it carries [InputRequired] and is not a failure.
func (r *CallResult) NeedsInput() bool {
	return r != nil && r.InputRequired != nil && !r.Failed()
}
