package mcpsdk

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// Multi-round-trip requests (protocol 2026-07-28) on go-sdk.
//
// A handler, native or toolmw, may answer with input requests: the SDK's
// CallToolResult.InputRequests and RequestState, toolctx's
// CallResult.InputRequired. The adapter converts one into the other both
// ways through the protocol's JSON (the SDK's InputRequestMap encodes each
// request as {"method", "params"}, which is toolctx.InputRequest's shape),
// so whatever the SDK can send, the chain sees, and the other way round.
//
// The SDK marks an input-required result for a client of protocol
// 2026-07-28 with an unexported result type, set only on the result a
// tool's handler returns; a result the adapter writes for the chain is
// decoded from JSON that carries "resultType": "input_required", which
// sets it. For an older client the SDK's legacy bridge, a receiving
// middleware it adds when the server is made (so inside the adapter's),
// fulfils the requests with server-initiated requests and calls the tool's
// handler again, within the one tools/call the chain runs for.

// inputRequiredFromSDK converts the input requests of an SDK result.
func inputRequiredFromSDK(r *mcp.CallToolResult) (*toolctx.InputRequired, error) {
	b, err := json.Marshal(r.InputRequests)
	if err != nil {
		return nil, err
	}
	out := &toolctx.InputRequired{State: r.RequestState}
	if err := json.Unmarshal(b, &out.Requests); err != nil {
		return nil, err
	}
	if out.Requests == nil {
		out.Requests = map[string]toolctx.InputRequest{}
	}
	return out, nil
}

// inputRequiredToSDK writes an input-required result for the SDK, with its
// _meta: no content, the requests and the state, and the result type
// a client of protocol 2026-07-28 reads.
func inputRequiredToSDK(r *toolctx.CallResult) (*mcp.CallToolResult, error) {
	ir := r.InputRequired
	requests := ir.Requests
	if requests == nil {
		requests = map[string]toolctx.InputRequest{}
	}
	b, err := json.Marshal(struct {
		Meta          map[string]any                  `json:"_meta,omitempty"`
		ResultType    string                          `json:"resultType"`
		InputRequests map[string]toolctx.InputRequest `json:"inputRequests"`
		RequestState  string                          `json:"requestState,omitempty"`
	}{r.Meta, "input_required", requests, ir.State})
	if err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	out := new(mcp.CallToolResult)
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	return out, nil
}
