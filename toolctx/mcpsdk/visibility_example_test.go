package mcpsdk_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// A caller sees only the tools its scopes allow: one policy for the guard
// and the lists. A call to "deploy" by this caller answers as an unknown
// tool.
func ExampleWithVisibility() {
	policy := middleware.ScopePolicy{Tools: map[string][]string{"deploy": {"deploy:prod"}}}
	s := mcp.NewServer(&mcp.Implementation{Name: "ops", Version: "1"}, nil)
	for _, name := range []string{"status", "deploy"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})
	}
	mcpsdk.Install(s, middleware.New(middleware.RequireScopes(policy)).Middleware(), mcpsdk.WithVisibility(policy.Allows))

	// An in-memory session whose caller holds no deploy scope (over HTTP,
	// the identity comes from the bearer token, per request).
	st, ct := mcp.NewInMemoryTransports()
	ctx := toolctx.WithIdentity(context.Background(), toolctx.Identity{Subject: "viewer", Scopes: []string{"read"}})
	ss, _ := s.Connect(ctx, st, nil)
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	res, _ := cs.ListTools(context.Background(), nil)
	for _, tl := range res.Tools {
		fmt.Println(tl.Name)
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}})
	fmt.Println(err)
	// Output:
	// status
	// calling "tools/call": unknown tool "deploy"
}
