package mcpsdk

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// Multi-round-trip requests (protocol 2026-07-28) convert both ways
// through the protocol's JSON; docs/adapters/mcpsdk.md.

// inputRequiredFromSDK converts the input requests of an SDK result.
func inputRequiredFromSDK(r *mcp.CallToolResult) (*toolctx.InputRequired, error) {
	out := &toolctx.InputRequired{State: r.RequestState}
	if err := adapter.Transcode(&out.Requests, r.InputRequests); err != nil {
		return nil, err
	}
	if out.Requests == nil {
		out.Requests = map[string]toolctx.InputRequest{}
	}
	return out, nil
}

// inputRequiredToSDK writes an input-required result for the SDK: its
// _meta, the requests, the state and the result type, no content.
func inputRequiredToSDK(r *toolctx.CallResult) (*mcp.CallToolResult, error) {
	ir := r.InputRequired
	requests := ir.Requests
	if requests == nil {
		requests = map[string]toolctx.InputRequest{}
	}
	out := new(mcp.CallToolResult)
	if err := adapter.Transcode(out, struct {
		Meta          map[string]any                  `json:"_meta,omitempty"`
		ResultType    string                          `json:"resultType"`
		InputRequests map[string]toolctx.InputRequest `json:"inputRequests"`
		RequestState  string                          `json:"requestState,omitempty"`
	}{r.Meta, "input_required", requests, ir.State}); err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	return out, nil
}
