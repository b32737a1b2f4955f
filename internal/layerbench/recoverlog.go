package layerbench

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RecoverLog is the receiving middleware a go-sdk user writes today, after
// the SDK's examples/server/middleware (slog around every method) plus the
// deferred recover the SDK does not have: a panic becomes an error, and
// every method is logged once to logger with its session, duration, tool
// and error.
func RecoverLog(logger *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			start := time.Now()
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic in %s: %v", method, r)
				}
				attrs := []slog.Attr{
					slog.String("method", method),
					slog.String("session_id", req.GetSession().ID()),
					slog.Duration("duration", time.Since(start)),
				}
				if ctr, ok := req.(*mcp.CallToolRequest); ok {
					attrs = append(attrs, slog.String("tool", ctr.Params.Name))
				}
				if err != nil {
					logger.LogAttrs(ctx, slog.LevelError, "MCP method failed", append(attrs, slog.Any("err", err))...)
					return
				}
				logger.LogAttrs(ctx, slog.LevelInfo, "MCP method completed", attrs...)
			}()
			return next(ctx, method, req)
		}
	}
}
