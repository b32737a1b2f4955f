package mcpsdk

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577) but both SDKs still serve it, and toolctx.Log sends through it.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// sender sends a call's notifications (adapter.Sender) over the call's
// session with the SDK's own methods (ServerSession.NotifyProgress and
// ServerSession.Log), so it works on every transport the SDK serves.
type sender struct {
	// sdkCtx is the SDK's context of the request: on streamable HTTP it
	// names the request, so that the SDK sends the notification on that
	// request's stream, and it holds the client's per-request log level
	// (protocol 2026-07-28).
	sdkCtx context.Context
	sreq   *mcp.CallToolRequest
}

// SendProgress sends a notifications/progress with the client's progress
// token, if it gave one.
func (s *sender) SendProgress(opts toolctx.ProgressOptions) error {
	token := s.sreq.Params.GetProgressToken()
	if token == nil || s.sreq.Session == nil {
		return nil
	}
	return s.sreq.Session.NotifyProgress(s.sdkCtx, &mcp.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      opts.Progress,
		Total:         opts.Total,
		Message:       opts.Message,
	})
}

// SendLog sends a notifications/message through ServerSession.Log, which
// drops it unless its level passes the one the client set.
func (s *sender) SendLog(opts toolctx.LogOptions) error {
	if s.sreq.Session == nil {
		return nil
	}
	return s.sreq.Session.Log(s.sdkCtx, &mcp.LoggingMessageParams{
		Level:  mcp.LoggingLevel(opts.Level),
		Logger: opts.Logger,
		Data:   opts.Data,
	})
}
