package main

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

// recordSessions adds mcp.server.session.duration to the metrics (with
// -metrics-addr): a receiving middleware starts a session when its
// initialize handshake succeeds and ends it when the session closes. A
// stateless server has no sessions, and records none.
func (t *telemetry) recordSessions(server *mcp.Server, stdio, stateless bool) error {
	if t == nil || t.mp == nil || stateless {
		return nil
	}
	sessions, err := otelmw.NewSessions(otelmw.WithMeterProvider(t.mp))
	if err != nil {
		return err
	}
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "initialize" || err != nil {
				return res, err
			}
			ss, ok := req.GetSession().(*mcp.ServerSession)
			init, _ := res.(*mcp.InitializeResult)
			if !ok || init == nil {
				return res, err
			}
			transport := toolctx.TransportSSE // the SDK sets no Extra on SSE
			switch {
			case stdio:
				transport = toolctx.TransportStdio
			case req.GetExtra() != nil && req.GetExtra().Header != nil:
				transport = toolctx.TransportStreamableHTTP
			}
			s := sessions.Start(otelmw.SessionStart{Transport: transport, ProtocolVersion: init.ProtocolVersion})
			go func() { s.End(context.Background(), otelmw.SessionEnd{Err: ss.Wait()}) }()
			return res, err
		}
	})
	return nil
}
