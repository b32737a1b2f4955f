package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// A tool that asks for a confirmation before it transfers money, and keeps
// the amount it was asked for in its request state: that state decides
// what the call does, so the server seals it.
func ExampleRounds() {
	transfer := func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		if req.RequestState != "" { // the confirmed round: the state is the handler's own again
			return toolctx.TextResult(fmt.Sprintf("round %d of %s: transferred %s", req.Round, req.RoundOf, req.RequestState))
		}
		ask, _ := json.Marshal(map[string]any{"message": "Transfer 100 EUR?", "requestedSchema": map[string]any{"type": "object"}})
		return toolctx.InputRequiredResult("100 EUR", map[string]toolctx.InputRequest{"confirm": {Method: toolctx.MethodElicit, Params: ask}})
	}
	key := []byte("an-example-key-of-32-bytes-long!") // from the server's secret store in real life
	h, _ := middleware.New(middleware.Rounds(middleware.RoundsConfig{Key: key})).ThenFunc(transfer)

	first := &toolctx.Request{Tool: "transfer", CallID: "call-1", Identity: &toolctx.Identity{Subject: "alice"}}
	res := h.CallTool(context.Background(), first)
	state := res.InputRequired.State
	fmt.Println("the client gets a sealed state:", strings.HasPrefix(state, "tm1s."), strings.Contains(state, "EUR"))

	// The client answers, echoing the state.
	answer := map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept"}`)}
	second := &toolctx.Request{Tool: "transfer", CallID: "call-2", Identity: first.Identity, RequestState: state, InputResponses: answer}
	fmt.Println(h.CallTool(context.Background(), second).Content[0].(*toolctx.Text).Text)

	// A client that edits the state is refused before the handler runs.
	forged := *second
	b := []byte(state)
	b[len(b)-5] = map[bool]byte{true: 'B', false: 'A'}[b[len(b)-5] == 'A']
	forged.RequestState = string(b)
	fmt.Println(h.CallTool(context.Background(), &forged).Error.Message)
	// Output:
	// the client gets a sealed state: true false
	// round 2 of call-1: transferred 100 EUR
	// the request state is not valid: call the tool again without it
}
