package middleware_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// Visibility asks the guard: of RequireScopes it is the policy's Allows,
// call by call; of the guard in observe mode every tool is visible; of a
// When it follows the matcher. The request it is given is not changed.
func TestVisibilityAsksTheGuard(t *testing.T) {
	p := middleware.ScopePolicy{Tools: map[string][]string{"deploy": {"deploy:prod"}, "read": {"read"}}, Default: []string{"any"}}
	enforced := middleware.Visibility(middleware.RequireScopes(p))
	observed := middleware.Visibility(middleware.Observe(middleware.RequireScopes(p)))
	some := middleware.Visibility(middleware.When(middleware.Tools("deploy"), middleware.RequireScopes(p)))
	for _, tool := range []string{"deploy", "read", "other"} {
		for _, id := range []*toolctx.Identity{nil, {Subject: "a"}, {Subject: "b", Scopes: []string{"read", "any"}}, {Subject: "c", Scopes: []string{"deploy:prod", "read", "any"}}} {
			req := &toolctx.Request{Tool: tool, Identity: id}
			before := *req
			assert.Equal(t, p.Allows(req), enforced(req), "%s %v: as Allows", tool, id)
			assert.True(t, observed(req), "%s %v: observe mode hides nothing", tool, id)
			assert.Equal(t, tool != "deploy" || p.Allows(req), some(req), "%s %v: only the matched tools", tool, id)
			assert.Equal(t, before, *req, "the request is unchanged")
		}
	}
	assert.PanicsWithValue(t, "middleware.Visibility: the guard is nil", func() { middleware.Visibility(nil) })
}

// Roll a scope policy out in observe mode with the adapter's visibility
// asked of the same guard: every caller sees every tool until Observe is
// dropped, and the calls it would refuse are noted would_reject.
func ExampleVisibility() {
	policy := middleware.ScopePolicy{Tools: map[string][]string{"deploy": {"deploy:prod"}}}
	scopes := middleware.Observe(middleware.RequireScopes(policy)) // drop Observe to enforce
	visible := middleware.Visibility(scopes)                       // mcpsdk.WithVisibility(visible), mcpgo.WithVisibility(visible)
	alice := &toolctx.Request{Tool: "deploy", Identity: &toolctx.Identity{Subject: "alice"}}
	fmt.Println("observed:", visible(alice))
	fmt.Println("enforced:", middleware.Visibility(middleware.RequireScopes(policy))(alice))
	h, err := middleware.New(scopes).Then(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("deployed")
	}))
	if err != nil {
		panic(err)
	}
	fmt.Println(h.CallTool(context.Background(), alice).Notes())
	// Output:
	// observed: true
	// enforced: false
	// [{would_reject require_scopes}]
}
