package mcpgo

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// Multi-round-trip requests (protocol 2026-07-28) on mcp-go.
//
// A handler, native or toolmw, may answer with input requests: mcp-go's
// CallToolResult with ResultType "input_required", InputRequests and
// RequestState; toolctx's CallResult.InputRequired. The adapter converts
// one into the other through the protocol's JSON ({"method", "params"} per
// request), both ways. For a client of an older protocol, mcp-go's legacy
// bridge runs after the tool middleware: it fulfils the requests with
// server-initiated requests and calls the whole middleware chain again with
// the answers, so each round is a run of the chain there too.

// inputRequiredFromMCP converts the input requests of an mcp-go result. A
// request that does not encode is kept with its method only (it cannot be
// sent: the adapter's encoding check fails the call).
func inputRequiredFromMCP(r *mcp.CallToolResult) *toolctx.InputRequired {
	out := &toolctx.InputRequired{State: r.RequestState, Requests: make(map[string]toolctx.InputRequest, len(r.InputRequests))}
	for id, req := range r.InputRequests {
		ir := toolctx.InputRequest{Method: string(req.Method)}
		if b, err := json.Marshal(req); err == nil {
			var w struct {
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(b, &w) == nil {
				ir.Params = w.Params
			}
		}
		out.Requests[id] = ir
	}
	return out
}

// inputRequiredToMCP writes an input-required result for mcp-go: no
// content, the requests and the state, and its result type. A request
// mcp-go cannot decode is kept with its method only, which then fails the
// adapter's encoding check (an internal failure, logged).
func inputRequiredToMCP(r *toolctx.CallResult) *mcp.CallToolResult {
	ir := r.InputRequired
	out := &mcp.CallToolResult{
		Result:               mcp.Result{ResultType: mcp.ResultTypeInputRequired, Meta: metaToMCP(r.Meta)},
		MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: ir.State, InputRequests: make(mcp.InputRequests, len(ir.Requests))},
	}
	for id, req := range ir.Requests {
		var m mcp.InputRequest
		b, err := json.Marshal(req)
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			m = mcp.InputRequest{Method: mcp.MCPMethod(req.Method)}
		}
		out.InputRequests[id] = m
	}
	return out
}
