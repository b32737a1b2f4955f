package mcpgo

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// AddHooks adds to h the hooks that run m for the tool calls mcp-go
// rejects before any tool middleware, after mcp-go has answered, so that
// interceptors see them too: an unknown tool (or one a tool filter hides),
// around a handler returning [errs.UnknownTool], and arguments that fail
// the input schema, around [errs.InvalidArguments] with mcp-go's feedback,
// rephrased as sentences about the arguments (in the client's result too).
// Both are public rejections: no diagnostics event; the chain's result is
// discarded. A call that entered the tool middleware is never run again.
// [ServerOption] calls AddHooks for you; call it only with [Middleware]
// installed yourself, with the same m and options, for one server. A nil h
// does nothing; an option given a value it cannot use panics. See
// docs/adapters/mcpgo.md, "What mcp-go runs before any tool middleware".
func AddHooks(h *server.Hooks, m toolctx.Middleware, opts ...Option) {
	if h == nil {
		return
	}
	newEngine(m, mustConfig("AddHooks", opts)).addHooks(h, nil)
}

// addHooks adds the rejection hooks to h; a non-nil s limits them to calls
// to s. With marks, a call's mark opens before the call and closes after.
func (e *engine) addHooks(h *server.Hooks, s *server.MCPServer) {
	addParseGuard(h, e.cfg, s) // parse.go
	if e.marks != nil {
		h.AddBeforeCallTool(func(ctx context.Context, _ any, _ *mcp.CallToolRequest) {
			if forServer(ctx, s) {
				e.marks.Open(ctx)
			}
		})
	}
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, err error) {
		if method != mcp.MethodToolsCall || !forServer(ctx, s) {
			return
		}
		if e.marks.Entered(ctx) || !errors.Is(err, server.ErrToolNotFound) {
			return
		}
		r, ok := message.(*mcp.CallToolRequest)
		if !ok || r == nil {
			return
		}
		e.rejected(ctx, r, errs.UnknownTool(r.Params.Name))
	})
	h.AddAfterCallTool(func(ctx context.Context, _ any, message *mcp.CallToolRequest, result any) {
		if !forServer(ctx, s) || e.marks.Entered(ctx) {
			return
		}
		res, ok := result.(*mcp.CallToolResult)
		if !ok || res == nil || !res.IsError || message == nil {
			return
		}
		feedback, ok := e.inputValidationFeedback(res)
		if !ok {
			return
		}
		e.rejected(ctx, message, rephrase(res, feedback))
	})
}

func forServer(ctx context.Context, s *server.MCPServer) bool {
	return s == nil || server.ServerFromContext(ctx) == s
}

// rejected runs the chain for a call mcp-go rejected, around a terminal
// that returns pub; mcp-go answers the client.
func (e *engine) rejected(ctx context.Context, r *mcp.CallToolRequest, pub *errs.Error) {
	c := &call{e: e, reject: toolctx.ErrorResult(pub)}
	fillRequest(&c.Request, ctx, r, e.cfg.Transport)
	_ = c.Observe(ctx, e.cfg, e.handler, c)
}

// inputValidationFeedback returns the text of r, mcp-go's isError
// input-validation result, or false for one that came through the adapter
// (its _meta[toolctx.ErrorMetaKey] says so); the text is never looked at.
func (e *engine) inputValidationFeedback(r *mcp.CallToolResult) (string, bool) {
	if r.Meta != nil {
		if _, ours := r.Meta.AdditionalFields[toolctx.ErrorMetaKey]; ours {
			return "", false
		}
	}
	return soleText(r)
}
