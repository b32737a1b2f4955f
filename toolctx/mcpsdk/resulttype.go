package mcpsdk

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The result type of the results the adapter builds.
//
// Protocol 2026-07-28 requires "resultType" on every result. go-sdk v1.8.0
// sets it on a CallToolResult only inside Server.callTool
// (handleMultiRoundTripResult), in an unexported field, and only for a
// client of that protocol (clientSupportsMultiRoundTrip: the session's
// initialize parameters say 2026-07-28 or later, or there are none, as on
// stateless HTTP). A result a receiving middleware returns without calling
// the SDK's handler never gets it (go-sdk issue #1225), and that is what
// the adapter returns for a guard's rejection, a cache hit or a timeout. The
// field's only writer outside the SDK is its JSON decoder, so the adapter
// decodes one empty complete result and starts every result it builds for
// such a client from a copy of it, by the SDK's own rule.

// completeTemplate is an empty CallToolResult whose result type is
// "complete"; never changed once decoded.
var completeTemplate = sync.OnceValue(func() mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &r); err != nil {
		panic("mcpsdk: decoding the complete result template: " + err.Error())
	}
	return r
})

// modernClient is go-sdk's clientSupportsMultiRoundTrip (mcp/mrtr.go): the
// session's client speaks protocol 2026-07-28 or later, or did not say
// (the SDK's default is its latest version, 2026-07-28).
func modernClient(ss *mcp.ServerSession) bool {
	if ss == nil {
		return true
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion >= "2026-07-28"
	}
	return true
}

// completeShell is an empty result with the result type "complete" for a
// client of ss that expects one, and nil for an older client.
func completeShell(ss *mcp.ServerSession) *mcp.CallToolResult {
	if !modernClient(ss) {
		return nil
	}
	r := completeTemplate()
	return &r
}

// withResultType returns r with the result type "complete" for a client of
// ss that expects one, and r itself for an older client.
func withResultType(ss *mcp.ServerSession, r *mcp.CallToolResult) *mcp.CallToolResult {
	out := completeShell(ss)
	if out == nil {
		return r
	}
	out.Meta, out.Content, out.StructuredContent, out.IsError = r.Meta, r.Content, r.StructuredContent, r.IsError
	return out
}
