package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// WithVisibility is [adapter.WithVisibility]. [ServerOption] applies it as
// an mcp-go tool filter (server.WithToolFilter), which mcp-go applies to
// every tools/list and, before any tool middleware, to every tools/call: a
// hidden tool is answered exactly as a tool the server does not have
// (JSON-RPC -32602, "tool 'name' not found: tool not found"), and the
// chain runs for the call as for any unknown tool (see [AddHooks]). The
// caller is the one an HTTP layer put in the request's context
// ([toolctx.IdentityFrom]), per request on every transport. [Middleware]
// alone cannot filter lists: use ServerOption, or give [ToolFilter] to
// server.WithToolFilter yourself.
var WithVisibility = adapter.WithVisibility

// ToolFilter returns the mcp-go tool filter of the [WithVisibility]
// predicate among opts, or nil if there is none. [ServerOption] installs
// it; use it directly only with [Middleware] and [AddHooks].
func ToolFilter(opts ...Option) server.ToolFilterFunc {
	return toolFilter(newConfig(opts))
}

func toolFilter(cfg *adapter.Config) server.ToolFilterFunc {
	if cfg.Visible == nil {
		return nil
	}
	return func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
		caller := toolctx.Request{
			Identity:  toolctx.IdentityFrom(ctx),
			RequestID: toolctx.RequestIDFrom(ctx),
			Transport: cfg.Transport,
		}
		session := server.ClientSessionFromContext(ctx)
		if session != nil {
			caller.SessionID = session.SessionID()
		}
		if caller.Transport == "" {
			caller.Transport = detectTransport(session)
		}
		out := make([]mcp.Tool, 0, len(tools))
		for _, t := range tools {
			r := caller
			r.Tool = t.Name
			if !cfg.Hidden(&r) {
				out = append(out, t)
			}
		}
		return out
	}
}
