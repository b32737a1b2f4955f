package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/internal/notify"
	"github.com/toolmw/toolmw/toolctx"
)

// notifier is the toolctx.Notifier of one call: it sends to the call's
// session with mcp-go's own methods (MCPServer.SendNotificationToClient,
// MCPServer.SendLogMessageToClient), so it works on every transport
// mcp-go serves (stdio, streamable HTTP, SSE, in-process).
type notifier struct {
	// sdkCtx is mcp-go's context of the call: it names the server and the
	// session (on streamable HTTP, the request's stream) and holds a
	// per-request log level (protocol 2026-07-28). Notifications are sent
	// with it whatever context the handler passes, which is checked only
	// for having ended.
	sdkCtx context.Context
	token  mcp.ProgressToken
	gate   notify.Gate
}

// init sets n up for the call whose mcp-go context is ctx.
func (n *notifier) init(ctx context.Context, r *mcp.CallToolRequest) {
	n.sdkCtx = ctx
	if m := r.Params.Meta; m != nil {
		n.token = m.ProgressToken
	}
}

// target is where n sends: the server and whether the call has a session
// to send to.
func (n *notifier) target() (*server.MCPServer, bool) {
	if n.sdkCtx == nil {
		return nil, false // a call mcp-go rejected: the gate has ended
	}
	srv := server.ServerFromContext(n.sdkCtx)
	return srv, srv != nil && server.ClientSessionFromContext(n.sdkCtx) != nil
}

// Progress sends a notifications/progress with the client's progress token;
// without a token it checks opts and sends nothing.
func (n *notifier) Progress(ctx context.Context, opts toolctx.ProgressOptions) error {
	srv, ok := n.target()
	if n.token == nil || !ok {
		return n.gate.Progress(ctx, opts, nil)
	}
	return n.gate.Progress(ctx, opts, func() error {
		params := map[string]any{"progressToken": n.token, "progress": opts.Progress}
		if opts.Total != 0 {
			params["total"] = opts.Total
		}
		if opts.Message != "" {
			params["message"] = opts.Message
		}
		return srv.SendNotificationToClient(n.sdkCtx, string(mcp.MethodNotificationProgress), params)
	})
}

// Log sends a notifications/message through MCPServer.SendLogMessageToClient,
// which drops it unless its level passes the session's (or the request's).
func (n *notifier) Log(ctx context.Context, opts toolctx.LogOptions) error {
	return n.gate.Log(ctx, opts, func(opts toolctx.LogOptions) error {
		srv, ok := n.target()
		if !ok {
			return nil
		}
		err := srv.SendLogMessageToClient(n.sdkCtx, mcp.NewLoggingMessageNotification(mcp.LoggingLevel(opts.Level), opts.Logger, opts.Data))
		if err == server.ErrSessionDoesNotSupportLogging {
			return nil // a session of its own kind that takes no log: nothing to send
		}
		return err
	})
}
