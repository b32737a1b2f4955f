package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// WithVisibility is [adapter.WithVisibility]. [ServerOption] applies it as
// an mcp-go tool filter, so a hidden tool is listed and answered as one the
// server does not have; [Middleware] alone cannot (see [ToolFilter]).
var WithVisibility = adapter.WithVisibility

// ToolFilter returns the mcp-go tool filter of the [WithVisibility]
// predicate among opts, or nil if there is none, for servers without
// [ServerOption]. An option given a value it cannot use panics.
func ToolFilter(opts ...Option) server.ToolFilterFunc {
	return toolFilter(mustConfig("ToolFilter", opts))
}

func toolFilter(cfg *adapter.Config) server.ToolFilterFunc {
	if cfg.Visible == nil {
		return nil
	}
	return func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
		var caller toolctx.Request
		identify(&caller, ctx, cfg.Transport)
		return adapter.Visible(cfg, caller, tools, func(t mcp.Tool) (string, bool) { return t.Name, true })
	}
}
