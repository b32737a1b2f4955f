package mcpgo

import (
	"context"
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// AddHooks adds to h the hooks that run m for the tool calls mcp-go rejects
// before any tool middleware, so that interceptors (audit, After, guards)
// see them as they see every other call:
//
//   - an unknown tool (or one a tool filter hides), which mcp-go answers
//     with a JSON-RPC -32602 protocol error: m runs around a handler that
//     returns [errs.UnknownTool](name), code [errs.CodeUnknownTool];
//   - arguments that fail the tool's input schema
//     (server.WithInputSchemaValidation), which mcp-go answers with an
//     isError result holding the validator's feedback: m runs around a
//     handler that returns [errs.InvalidArguments](feedback), code
//     [errs.CodeInvalidArguments], the feedback (the very text the client
//     gets) as the public message.
//
// Both are public rejections: middleware.Diagnostics is not called, and an
// audit row holds the code and the public message. The feedback is public:
// mcp-go builds it from the JSON pointers into the caller's own arguments,
// the schema's constraints (which tools/list publishes) and the caller's
// values, or from the JSON error of decoding the caller's arguments.
//
// The hooks run after mcp-go has produced its answer and before it is sent;
// the chain's result is discarded, so the client gets exactly what mcp-go
// sends, whatever the chain returns. The Request is filled as for any other
// call (see [Middleware]). A call that reached the tool middleware is never
// run again: the hooks act only on mcp-go's tool-not-found error and on an
// isError result that carries mcp-go's input-validation text and did not
// come through the adapter (every failure the adapter answers carries
// _meta[toolctx.ErrorMetaKey]). Other rejections made before the tool
// middleware (a tool that requires task augmentation, an unparsable
// request) are not run through m.
//
// [ServerOption] calls AddHooks for you; call it yourself only when you
// install the tool middleware with [Middleware] (s.Use, or
// server.WithToolHandlerMiddleware), or when you give server.WithHooks
// after ServerOption (WithHooks replaces the server's hooks):
//
//	hooks := &server.Hooks{}
//	mcpgo.AddHooks(hooks, chain.Middleware())
//	s := server.NewMCPServer("demo", "1.0.0",
//		server.WithToolHandlerMiddleware(mcpgo.Middleware(chain.Middleware())),
//		server.WithHooks(hooks),
//		server.WithInputSchemaValidation(),
//	)
//
// Give it the same m and options as the middleware. h must serve one
// server: the hooks act on the rejected calls of every server they are
// installed on.
func AddHooks(h *server.Hooks, m toolctx.Middleware, opts ...Option) {
	if h == nil {
		return
	}
	newAdapter(m, opts).addHooks(h, nil)
}

// addHooks adds the rejection hooks to h. A non-nil s limits them to calls
// to s (h may be shared between servers).
func (a *adapter) addHooks(h *server.Hooks, s *server.MCPServer) {
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, err error) {
		if method != mcp.MethodToolsCall || !errors.Is(err, server.ErrToolNotFound) {
			return
		}
		r, ok := message.(*mcp.CallToolRequest)
		if !ok || r == nil || !forServer(ctx, s) {
			return
		}
		a.rejected(ctx, r, errs.UnknownTool(r.Params.Name))
	})
	h.AddAfterCallTool(func(ctx context.Context, _ any, message *mcp.CallToolRequest, result any) {
		res, ok := result.(*mcp.CallToolResult)
		if !ok || res == nil || !res.IsError || message == nil {
			return
		}
		feedback, ok := inputValidationFeedback(res)
		if !ok || !forServer(ctx, s) {
			return
		}
		a.rejected(ctx, message, errs.InvalidArguments(feedback))
	})
}

func forServer(ctx context.Context, s *server.MCPServer) bool {
	return s == nil || server.ServerFromContext(ctx) == s
}

// rejected runs the chain for a call mcp-go rejected before the tool
// middleware, around a terminal handler that returns pub. The result is
// discarded: mcp-go answers the client.
func (a *adapter) rejected(ctx context.Context, r *mcp.CallToolRequest, pub *errs.Error) {
	c := &call{Context: ctx, reject: toolctx.ErrorResult(pub)}
	fillRequest(&c.req, ctx, r, a.cfg.transport)
	_ = a.run(c)
}

// The prefixes of mcp-go's input-validation feedback (server/input_validation.go:
// inputSchemaValidator.validate and formatValidationError). Output-schema
// failures, which mcp-go reports after the tool middleware, start with
// "output schema validation failed: " or "invalid structured content: ".
const (
	schemaFeedbackPrefix = "input schema validation failed: "
	decodeFeedbackPrefix = "invalid arguments: "
)

// inputValidationFeedback returns the text of mcp-go's input-validation
// result (mcp.NewToolResultError(err.Error())), or false for any other
// result. A failure the adapter answered always has
// _meta[toolctx.ErrorMetaKey], so a handler's own isError result with the
// same words is not mistaken for one.
func inputValidationFeedback(r *mcp.CallToolResult) (string, bool) {
	if !r.IsError || len(r.Content) != 1 || r.StructuredContent != nil || r.Meta != nil {
		return "", false
	}
	var text string
	switch tc := r.Content[0].(type) {
	case mcp.TextContent:
		text = tc.Text
	case *mcp.TextContent:
		if tc == nil {
			return "", false
		}
		text = tc.Text
	default:
		return "", false
	}
	if !strings.HasPrefix(text, schemaFeedbackPrefix) && !strings.HasPrefix(text, decodeFeedbackPrefix) {
		return "", false
	}
	return text, true
}
