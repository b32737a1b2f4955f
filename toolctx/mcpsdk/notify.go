package mcpsdk

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577) but both SDKs still serve it, and toolctx.Log sends through it.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// sender sends a call's notifications (adapter.Sender) with the session's
// own methods, on every transport the SDK serves.
type sender struct {
	// sdkCtx names the request's stream on streamable HTTP and holds the
	// client's per-request log level.
	sdkCtx context.Context
	sreq   *mcp.CallToolRequest
}

// SendProgress implements adapter.Sender.
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

// SendLog implements adapter.Sender; the SDK drops a level the client
// did not ask for.
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
