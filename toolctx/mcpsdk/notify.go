package mcpsdk

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577) but both SDKs still serve it, and toolctx.Log sends through it.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/internal/notify"
	"github.com/toolmw/toolmw/toolctx"
)

// notifier is the toolctx.Notifier of one call: it sends over the call's
// session with the SDK's own methods (ServerSession.NotifyProgress and
// ServerSession.Log), so it works on every transport the SDK serves
// (stdio, streamable HTTP, SSE, in-memory).
type notifier struct {
	// sdkCtx is the SDK's context of the request: on streamable HTTP it
	// names the request, so that the SDK sends the notification on that
	// request's stream, and it holds the client's per-request log level
	// (protocol 2026-07-28). Notifications are sent with it whatever
	// context the handler passes, which is checked only for having ended.
	sdkCtx context.Context
	sreq   *mcp.CallToolRequest
	gate   notify.Gate
}

// Progress sends a notifications/progress with the client's progress token;
// without a token it checks opts and sends nothing.
func (n *notifier) Progress(ctx context.Context, opts toolctx.ProgressOptions) error {
	token := n.sreq.Params.GetProgressToken()
	if token == nil || n.sreq.Session == nil {
		return n.gate.Progress(ctx, opts, nil)
	}
	return n.gate.Progress(ctx, opts, func() error {
		return n.sreq.Session.NotifyProgress(n.sdkCtx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      opts.Progress,
			Total:         opts.Total,
			Message:       opts.Message,
		})
	})
}

// Log sends a notifications/message through ServerSession.Log, which
// drops it unless its level passes the one the client set.
func (n *notifier) Log(ctx context.Context, opts toolctx.LogOptions) error {
	return n.gate.Log(ctx, opts, func(opts toolctx.LogOptions) error {
		if n.sreq.Session == nil {
			return nil
		}
		return n.sreq.Session.Log(n.sdkCtx, &mcp.LoggingMessageParams{
			Level:  mcp.LoggingLevel(opts.Level),
			Logger: opts.Logger,
			Data:   opts.Data,
		})
	})
}
