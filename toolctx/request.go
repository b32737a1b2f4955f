package toolctx

import (
	"encoding/json"
	"net/http"
)

// Transport names the MCP transport a call arrived on.
type Transport string

// The transports of the MCP Go SDKs.
const (
	TransportStdio          Transport = "stdio"
	TransportStreamableHTTP Transport = "streamable-http"
	TransportSSE            Transport = "sse"
	TransportInMemory       Transport = "in-memory"
	// TransportUnknown is used when an adapter cannot tell.
	TransportUnknown Transport = "unknown"
)

// Request is one tool call as toolmw sees it. Adapters fill it from what the
// SDK exposes. Once the call has started it is read-only: interceptors and
// handlers must not change it (hooks see it through [Details]); an
// interceptor that needs a different request passes a copy to the next
// handler.
type Request struct {
	// Tool is the name of the tool called.
	Tool string
	// Arguments are the call's arguments: their JSON is
	// Arguments.JSON(), made only when first read where the SDK handed
	// them over decoded (see [Arguments]).
	Arguments Arguments
	// CallID identifies the call and is always set: the JSON-RPC id where a
	// transport exposes it, otherwise a generated correlation id (see
	// adapter.NewCallID in package toolctx/adapter).
	CallID string
	// RequestID is the HTTP request id where an HTTP layer set one.
	RequestID string
	// SessionID is the MCP session id, empty where the transport has none.
	SessionID string
	// Transport is the transport the call arrived on.
	Transport Transport
	// Meta is the client-supplied _meta as sent, the protocol's own keys
	// (see [ReservedMetaPrefix]) included. It is untrusted: the client
	// chose every key and value. Hooks see it through [Details.Meta], which
	// leaves the protocol's keys out.
	Meta map[string]any
	// Header is the HTTP header of the request that carried the call, on
	// HTTP transports; nil elsewhere. It may hold credentials: it is never
	// copied into [Details].
	Header http.Header
	// Identity is the caller as an authentication layer established it,
	// or nil.
	Identity *Identity
	// InputResponses are the client's answers to the requests of an
	// input-required result (see [InputRequired]), keyed by their ids,
	// each the JSON the client sent; nil on a call's first round.
	InputResponses map[string]json.RawMessage
	// RequestState is the state of the input-required result this call
	// answers, as the client echoed it back (untrusted: the client can send
	// anything), or "" on a first round.
	RequestState string
	// Round is the round of a multi-round-trip call this request is, from
	// 2 for the client's first answer on, and RoundOf the CallID of the
	// call's first round. middleware.Rounds sets both on the copy it
	// passes on for a later round; 0 and "" on a first round, on a call
	// that is no multi-round-trip call, or where nothing told.
	Round   int
	RoundOf string
	// TaskID is the id of the task this call runs as, for a call the
	// client augmented with a task (the io.modelcontextprotocol/tasks
	// extension, mcp-go's experimental tasks), where the adapter learns it;
	// empty for an ordinary call. The chain then runs once, for the task's
	// execution, and its result is the task's final outcome.
	TaskID string
}

// Identity is an authenticated caller: who, and what they may do. It never
// holds a credential.
type Identity struct {
	Subject string
	Scopes  []string
}

// ReservedMetaPrefix is the prefix of the _meta keys that MCP clients of
// protocol 2026-07-28 add to every request (protocol version, client
// info, ...). They describe the protocol, not the call: [Details.Meta], and
// so every hook and audit row, leaves them out and records only what the
// caller chose to send. [Request.Meta] keeps them, for handlers that want
// the client's info.
const ReservedMetaPrefix = "io.modelcontextprotocol/"
