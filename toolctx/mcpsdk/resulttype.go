package mcpsdk

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol 2026-07-28 requires "resultType" on every result; go-sdk v1.8.0
// sets it only inside Server.callTool, in an unexported field whose only
// other writer is its JSON decoder (go-sdk issue #1225). So results the
// adapter builds start from a decoded template (docs/adapters/mcpsdk.md).

// completeTemplate is an empty result of type "complete", never changed.
var completeTemplate = sync.OnceValue(func() mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &r); err != nil {
		panic("mcpsdk: decoding the complete result template: " + err.Error())
	}
	return r
})

// modernClient is go-sdk's clientSupportsMultiRoundTrip (mcp/mrtr.go).
func modernClient(ss *mcp.ServerSession) bool {
	if ss == nil {
		return true
	}
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= "2026-07-28"
}

// completeShell is an empty complete result for a client of ss that
// expects a result type, and nil for an older client.
func completeShell(ss *mcp.ServerSession) *mcp.CallToolResult {
	if !modernClient(ss) {
		return nil
	}
	r := completeTemplate()
	return &r
}

// withResultType is r typed as completeShell is.
func withResultType(ss *mcp.ServerSession, r *mcp.CallToolResult) *mcp.CallToolResult {
	out := completeShell(ss)
	if out == nil {
		return r
	}
	out.Meta, out.Content, out.StructuredContent, out.IsError = r.Meta, r.Content, r.StructuredContent, r.IsError
	return out
}
