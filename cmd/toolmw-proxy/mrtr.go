package main

//lint:file-ignore SA1019 sampling and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but still input requests an upstream may make.

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Multi-round-trip requests (protocol 2026-07-28, SEP-2322): an upstream
// answers a tools/call, prompts/get or resources/read input-required, with
// the requests it needs the client to fulfil (an elicitation, a sampling,
// its roots) and a state to echo back; the client calls again with the
// answers. The proxy's client leaves that to the proxy (its
// MultiRoundTrip is disabled): a client on 2026-07-28 gets the answer as
// it is and calls again through the proxy, which forwards the answers. A
// client below 2026-07-28 cannot be sent an input-required answer: the
// proxy asks it with the requests of its protocol instead, on the call's
// own stream, and calls the upstream again, within the client's one call,
// as go-sdk's client would have done.

// maxInputRounds bounds the rounds of one call the proxy fulfils for a
// client below 2026-07-28, as go-sdk's client bounds its own
// (maxMultiRoundTripRetries, mcp/mrtr.go:17 in v1.8.0).
const maxInputRounds = 10

// asksInput reports whether the proxy must fulfil requests, an upstream's
// input requests, for ss itself: ss's protocol is below 2026-07-28. A
// session that has not said its protocol is taken for one on the latest,
// as go-sdk's server takes it (clientSupportsMultiRoundTrip, mcp/mrtr.go).
func asksInput(ss *mcp.ServerSession, requests mcp.InputRequestMap) bool {
	if requests == nil || ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion < "2026-07-28"
}

// fulfil asks ss for what requests need, in round round of a call, on ctx
// (the call's own), and returns the client's answers by the requests' ids.
// A failure names the request and is not the upstream's: its JSON-RPC
// error, if the client's, is text.
func fulfil(ctx context.Context, ss *mcp.ServerSession, requests mcp.InputRequestMap, round int) (mcp.InputResponseMap, error) {
	if len(requests) == 0 {
		return nil, errors.New("the upstream answered input-required with no input requests (it is busy), and the client's protocol has no retry for it")
	}
	if round > maxInputRounds {
		return nil, fmt.Errorf("the upstream answered input-required %d times in one call", maxInputRounds)
	}
	out := make(mcp.InputResponseMap, len(requests))
	for id, r := range requests {
		var res mcp.InputResponse
		var err error
		switch r := r.(type) {
		case *mcp.ElicitParams:
			res, err = ss.Elicit(ctx, r)
		case *mcp.CreateMessageWithToolsParams:
			res, err = ss.CreateMessageWithTools(ctx, r)
		case *mcp.CreateMessageParams:
			res, err = ss.CreateMessage(ctx, r)
		case *mcp.ListRootsParams:
			res, err = ss.ListRoots(ctx, r)
		default:
			err = fmt.Errorf("unknown input request %T", r)
		}
		if err != nil {
			return nil, fmt.Errorf("the client did not answer the upstream's input request %q: %v", id, err)
		}
		out[id] = res
	}
	return out, nil
}

// inputOf is what an upstream's result asks the client for, and its state.
func inputOf(res mcp.Result) (mcp.InputRequestMap, string) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests, r.RequestState
	case *mcp.GetPromptResult:
		return r.InputRequests, r.RequestState
	case *mcp.ReadResourceResult:
		return r.InputRequests, r.RequestState
	}
	return nil, ""
}

// withInput is a copy of params carrying the client's answers and the
// state for the upstream's next round.
func withInput(params mcp.Params, answers mcp.InputResponseMap, state string) mcp.Params {
	switch p := params.(type) {
	case *mcp.CallToolParams:
		c := *p
		c.InputResponses, c.RequestState = answers, state
		return &c
	case *mcp.GetPromptParams:
		c := *p
		c.InputResponses, c.RequestState = answers, state
		return &c
	case *mcp.ReadResourceParams:
		c := *p
		c.InputResponses, c.RequestState = answers, state
		return &c
	}
	return params
}
