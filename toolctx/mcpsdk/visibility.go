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

// WithVisibility is [adapter.WithVisibility]: the adapter filters each
// tools/list the server answers (a receiving middleware sees it, as it sees
// tools/call), per request, and answers a tools/call of a hidden tool with
// the SDK's own unknown-tool error (JSON-RPC -32602, "unknown tool
// \"name\""), which the SDK's Server.callTool returns for a tool it does
// not have. The caller is told as for a call: streamable HTTP's token info
// (auth.RequireBearerToken, [ForwardIdentity]) on every session, and the
// context's identity ([toolctx.IdentityFrom]) where the context is the
// request's (in-memory, stdio, stateless HTTP).
var WithVisibility = adapter.WithVisibility

// listVisible answers a tools/list with the tools cfg shows its caller.
func listVisible(ctx context.Context, cfg *adapter.Config, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	lreq, _ := req.(*mcp.ListToolsRequest)
	lr, _ := res.(*mcp.ListToolsResult)
	if err != nil || lr == nil || lreq == nil {
		return res, err
	}
	caller := listCaller(cfg, ctx, lreq)
	out := *lr
	out.Tools = make([]*mcp.Tool, 0, len(lr.Tools))
	for _, t := range lr.Tools {
		if t == nil {
			continue
		}
		r := caller
		r.Tool = t.Name
		if !cfg.Hidden(&r) {
			out.Tools = append(out.Tools, t)
		}
	}
	return &out, nil
}

// listCaller is the caller of a tools/list as fill tells the caller of a
// tools/call: the request [WithVisibility]'s predicate gets, without a tool.
func listCaller(cfg *adapter.Config, ctx context.Context, lreq *mcp.ListToolsRequest) toolctx.Request {
	var r toolctx.Request
	identify(cfg, ctx, &r, lreq.Session, lreq.Extra)
	return r
}

// unknownTool is the SDK's answer to a tools/call of a tool it does not
// have (mcp/server.go, Server.callTool), as a protocol error the chain sees
// as an [errs.CodeUnknownTool] failure.
func unknownTool(name string) *protocolError {
	return &protocolError{pub: errs.UnknownTool(name),
		wire: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}}
}
