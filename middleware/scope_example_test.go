package middleware_test

import (
	"context"
	"fmt"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleRequireScopes() {
	h, _ := middleware.New(
		middleware.Normalize(errs.Normalizer{}),
		middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{
			"deploy": {"deploy:prod"},
		}}),
	).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("deployed") })

	// The identity comes from httpmw.Authenticate, or from the go-sdk's
	// auth.RequireBearerToken through mcpsdk.
	alice := &toolctx.Request{Tool: "deploy", Identity: &toolctx.Identity{Subject: "alice", Scopes: []string{"deploy:prod"}}}
	bob := &toolctx.Request{Tool: "deploy", Identity: &toolctx.Identity{Subject: "bob", Scopes: []string{"billing:admin"}}}
	fmt.Println(h.CallTool(context.Background(), alice).Content[0].(*toolctx.Text).Text)
	res := h.CallTool(context.Background(), bob)
	fmt.Println(res.Error.Code, res.Error.Message, res.Error.Detail)
	// Output:
	// deployed
	// permission_denied calling "deploy" needs the scope "deploy:prod" map[missing_scopes:[deploy:prod]]
}
