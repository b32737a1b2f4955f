package toolctx_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw/toolctx"
)

// A tool that asks the user to confirm before it deletes: its first round
// answers with an input-required result; the client asks the user and calls
// again with the answer and the state. The state names what is deleted, so
// a server must seal it (middleware.Rounds with a key): the client could
// send back another name.
func ExampleInputRequiredResult() {
	deleteRepo := toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		if raw, ok := req.InputResponses["confirm"]; ok && req.RequestState == "delete:acme/site" {
			var answer struct {
				Action string `json:"action"`
			}
			if err := json.Unmarshal(raw, &answer); err != nil || answer.Action != "accept" {
				return toolctx.TextResult("kept acme/site")
			}
			return toolctx.TextResult("deleted acme/site")
		}
		ask, _ := json.Marshal(map[string]any{"message": "Delete acme/site for good?", "requestedSchema": map[string]any{"type": "object"}})
		return toolctx.InputRequiredResult("delete:acme/site", map[string]toolctx.InputRequest{
			"confirm": {Method: toolctx.MethodElicit, Params: ask},
		})
	})

	first := deleteRepo.CallTool(context.Background(), &toolctx.Request{Tool: "delete_repo"})
	fmt.Println(first.NeedsInput(), first.Failed(), first.InputRequired.Requests["confirm"].Method)

	second := deleteRepo.CallTool(context.Background(), &toolctx.Request{
		Tool:           "delete_repo",
		RequestState:   first.InputRequired.State,
		InputResponses: map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept"}`)},
	})
	fmt.Println(second.NeedsInput(), second.Content[0].(*toolctx.Text).Text)
	// Output:
	// true false elicitation/create
	// false deleted acme/site
}
