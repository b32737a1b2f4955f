package mcpsdk

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// WithVisibility is [adapter.WithVisibility]: each tools/list is filtered
// per request, and a call of a hidden tool gets the SDK's own unknown-tool
// error (docs/adapters/mcpsdk.md, "Visibility").
var WithVisibility = adapter.WithVisibility

// listVisible answers a tools/list with the tools cfg shows its caller.
func listVisible(ctx context.Context, cfg *adapter.Config, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	lreq, _ := req.(*mcp.ListToolsRequest)
	lr, _ := res.(*mcp.ListToolsResult)
	if err != nil || lr == nil || lreq == nil {
		return res, err
	}
	var caller toolctx.Request // as fill tells a tools/call's caller
	identify(cfg, ctx, &caller, lreq.Session, lreq.Extra)
	out := *lr
	out.Tools = adapter.Visible(cfg, caller, lr.Tools, func(t *mcp.Tool) (string, bool) {
		if t == nil {
			return "", false
		}
		return t.Name, true
	})
	return &out, nil
}

// unknownTool is the SDK's answer to a call of a tool it does not have
// (mcp/server.go, Server.callTool); the chain sees errs.CodeUnknownTool.
func unknownTool(name string) *protocolError {
	return &protocolError{pub: errs.UnknownTool(name),
		wire: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}}
}
