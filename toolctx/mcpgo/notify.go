package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolctx"
)

// sender sends a call's notifications (adapter.Sender) with mcp-go's own
// methods, on every transport mcp-go serves.
type sender struct {
	// sdkCtx names the server and session (the request's stream on
	// streamable HTTP) and holds a per-request log level; nil sends nothing.
	sdkCtx context.Context
	token  mcp.ProgressToken
}

func (s *sender) init(ctx context.Context, r *mcp.CallToolRequest) {
	s.sdkCtx = ctx
	if m := r.Params.Meta; m != nil {
		s.token = m.ProgressToken
	}
}

// target is the server, and whether the call has a session to send to.
func (s *sender) target() (*server.MCPServer, bool) {
	if s.sdkCtx == nil {
		return nil, false
	}
	srv := server.ServerFromContext(s.sdkCtx)
	return srv, srv != nil && server.ClientSessionFromContext(s.sdkCtx) != nil
}

// SendProgress implements adapter.Sender.
func (s *sender) SendProgress(opts toolctx.ProgressOptions) error {
	srv, ok := s.target()
	if s.token == nil || !ok {
		return nil
	}
	params := map[string]any{"progressToken": s.token, "progress": opts.Progress}
	if opts.Total != 0 {
		params["total"] = opts.Total
	}
	if opts.Message != "" {
		params["message"] = opts.Message
	}
	return srv.SendNotificationToClient(s.sdkCtx, string(mcp.MethodNotificationProgress), params)
}

// SendLog implements adapter.Sender; mcp-go drops a level the session (or
// the request) did not ask for.
func (s *sender) SendLog(opts toolctx.LogOptions) error {
	srv, ok := s.target()
	if !ok {
		return nil
	}
	err := srv.SendLogMessageToClient(s.sdkCtx, mcp.NewLoggingMessageNotification(mcp.LoggingLevel(opts.Level), opts.Logger, opts.Data))
	if err == server.ErrSessionDoesNotSupportLogging {
		return nil // a session of its own kind that takes no log: nothing to send
	}
	return err
}
