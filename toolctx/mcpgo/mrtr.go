package mcpgo

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// Multi-round-trip requests (protocol 2026-07-28) convert both ways
// through the protocol's JSON; docs/adapters/mcpgo.md.

// inputRequiredFromMCP converts the input requests of an mcp-go result; a
// request that does not encode keeps its method only (and fails the
// encoding check).
func inputRequiredFromMCP(r *mcp.CallToolResult) *toolctx.InputRequired {
	out := &toolctx.InputRequired{State: r.RequestState, Requests: make(map[string]toolctx.InputRequest, len(r.InputRequests))}
	for id, req := range r.InputRequests {
		ir := toolctx.InputRequest{Method: string(req.Method)}
		var w struct {
			Params json.RawMessage `json:"params"`
		}
		if adapter.Transcode(&w, req) == nil {
			ir.Params = w.Params
		}
		out.Requests[id] = ir
	}
	return out
}

// inputRequiredToMCP writes an input-required result for mcp-go; a request
// it cannot decode keeps its method only (and fails the encoding check).
func inputRequiredToMCP(r *toolctx.CallResult) *mcp.CallToolResult {
	ir := r.InputRequired
	out := &mcp.CallToolResult{
		Result:               mcp.Result{ResultType: mcp.ResultTypeInputRequired, Meta: metaToMCP(r.Meta)},
		MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: ir.State, InputRequests: make(mcp.InputRequests, len(ir.Requests))},
	}
	for id, req := range ir.Requests {
		var m mcp.InputRequest
		if err := adapter.Transcode(&m, req); err != nil {
			m = mcp.InputRequest{Method: mcp.MCPMethod(req.Method)}
		}
		out.InputRequests[id] = m
	}
	return out
}
