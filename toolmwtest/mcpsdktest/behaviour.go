package mcpsdktest

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
	"github.com/toolmw/toolmw/toolmwtest"
)

// addCountTool is the kit's AddCountTool: a typed tool, whose input schema
// the SDK infers and validates.
func addCountTool(s *mcp.Server, name string) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: "toolmwtest: takes a count"},
		func(context.Context, *mcp.CallToolRequest, toolmwtest.CountArgs) (*mcp.CallToolResult, any, error) {
			return result(toolmwtest.Reply{Text: toolmwtest.RowCountText}), nil, nil
		})
}

// newGuarded is the kit's NewGuarded.
func newGuarded(m toolctx.Middleware, visible func(*toolctx.Request) bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "toolmwtest", Version: "0"}, nil)
	mcpsdk.Install(s, m, mcpsdk.WithVisibility(visible))
	return s
}

// identify is the kit's Identify: a stateful session's calls get the
// HTTP request's identity only through mcpsdk.ForwardIdentity, which
// needs a bearer token (the layer in front stands for the one that
// checked it).
func identify(h http.Handler) http.Handler {
	fwd := mcpsdk.ForwardIdentity(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer toolmwtest")
		fwd.ServeHTTP(w, r)
	})
}
