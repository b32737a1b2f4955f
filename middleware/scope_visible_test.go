package middleware_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestScopePolicyAllowsAgreesWithRequireScopes: Allows admits exactly the
// calls RequireScopes lets through, for listed and default tools, with and
// without an identity.
func TestScopePolicyAllowsAgreesWithRequireScopes(t *testing.T) {
	p := middleware.ScopePolicy{Tools: map[string][]string{"deploy": {"deploy:prod", "ops"}, "open": nil}, Default: []string{"base"}}
	h := middleware.RequireScopes(p)(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("ran")
	}))
	ids := []*toolctx.Identity{nil, {Subject: "a"}, {Subject: "b", Scopes: []string{"base"}}, {Subject: "c", Scopes: []string{"deploy:prod"}},
		{Subject: "d", Scopes: []string{"ops", "deploy:prod"}}}
	for _, tool := range []string{"deploy", "open", "other"} {
		for _, id := range ids {
			req := &toolctx.Request{Tool: tool, Identity: id}
			ran := !h.CallTool(context.Background(), req).IsError
			require.Equal(t, ran, p.Allows(req), "tool %s identity %+v", tool, id)
		}
	}
	require.True(t, p.Allows(&toolctx.Request{Tool: "open"}))
	require.False(t, p.Allows(&toolctx.Request{Tool: "other"}))
}
