package mcpgo

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"

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
//     gets) as the public message. The feedback is rephrased, in the
//     result the client gets too, as sentences about the arguments
//     ("invalid arguments: b: expected a number, got null" for mcp-go's
//     "input schema validation failed: /b: &{Got:null Want:[number]}"),
//     and the public detail holds them as data ("problems": path, rule,
//     expected, got), never mcp-go's own text.
//
// Both are public rejections: middleware.Diagnostics is not called, and an
// audit row holds the code and the public message. The feedback is public:
// mcp-go builds it from the JSON pointers into the caller's own arguments,
// the schema's constraints (which tools/list publishes) and the caller's
// values, or from the JSON error of decoding the caller's arguments.
//
// The hooks run after mcp-go has produced its answer and before it is sent;
// the chain's result is discarded, so the client gets what mcp-go sends
// (invalid-arguments feedback rephrased), whatever the chain returns. The
// Request is filled as for any other call (see [Middleware]). A call that reached the tool middleware is never
// run again. That is decided by where the answer came from, never by its
// text: with [ServerOption] the adapter marks each call that enters its
// middleware, and the hooks act only on unmarked calls; with AddHooks and a
// separately installed [Middleware] (two adapter values, which share no
// marks) an answer that came through the adapter is told by the
// _meta[toolctx.ErrorMetaKey] every failure it answers carries. The hooks
// act on mcp-go's tool-not-found error and on an isError result mcp-go made
// without running the middleware (its input validation's). Other
// rejections made before the tool middleware (a tool that requires task
// augmentation, an unparsable request) are not run through m.
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
	newEngine(m, opts).addHooks(h, nil)
}

// addHooks adds the rejection hooks to h. A non-nil s limits them to calls
// to s (h may be shared between servers). With [ServerOption], a
// BeforeCallTool hook opens a mark for the call (keyed by the call's
// context, which mcp-go hands to the hooks and to the middleware alike),
// the middleware sets it when the call enters the chain, and the
// AfterCallTool and OnError hooks close it (see AddHooks for the rest).
func (e *engine) addHooks(h *server.Hooks, s *server.MCPServer) {
	addParseGuard(h, e.cfg, s) // parse.go
	if e.marks != nil {
		// A mark lives until the call's AfterCallTool or OnError hook;
		// only a panic in mcp-go between the two (which ends the call
		// without either) leaves one behind.
		h.AddBeforeCallTool(func(ctx context.Context, _ any, _ *mcp.CallToolRequest) {
			if forServer(ctx, s) && comparableContext(ctx) {
				e.marks.Store(ctx, new(atomic.Bool))
			}
		})
	}
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, err error) {
		if method != mcp.MethodToolsCall || !forServer(ctx, s) {
			return
		}
		if e.entered(ctx) || !errors.Is(err, server.ErrToolNotFound) {
			return
		}
		r, ok := message.(*mcp.CallToolRequest)
		if !ok || r == nil {
			return
		}
		e.rejected(ctx, r, errs.UnknownTool(r.Params.Name))
	})
	h.AddAfterCallTool(func(ctx context.Context, _ any, message *mcp.CallToolRequest, result any) {
		if !forServer(ctx, s) || e.entered(ctx) {
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

// comparableContext reports whether ctx can be a map key: a pointer, as
// every context the standard library and mcp-go make is (a comparable
// struct may still hold an interface whose value cannot be hashed).
func comparableContext(ctx context.Context) bool {
	t := reflect.TypeOf(ctx)
	return t != nil && t.Kind() == reflect.Pointer
}

// markEntered records that the call of ctx entered the tool middleware, for
// the adapter's own hooks.
func (e *engine) markEntered(ctx context.Context) {
	if e.marks == nil || !comparableContext(ctx) {
		return
	}
	if v, ok := e.marks.Load(ctx); ok {
		v.(*atomic.Bool).Store(true)
	}
}

// entered closes the call's mark and reports whether the call entered the
// tool middleware.
func (e *engine) entered(ctx context.Context) bool {
	if e.marks == nil || !comparableContext(ctx) {
		return false
	}
	v, ok := e.marks.LoadAndDelete(ctx)
	return ok && v.(*atomic.Bool).Load()
}

func forServer(ctx context.Context, s *server.MCPServer) bool {
	return s == nil || server.ServerFromContext(ctx) == s
}

// rejected runs the chain for a call mcp-go rejected before the tool
// middleware, around a terminal handler that returns pub. The result is
// discarded: mcp-go answers the client.
func (e *engine) rejected(ctx context.Context, r *mcp.CallToolRequest, pub *errs.Error) {
	c := &call{e: e, reject: toolctx.ErrorResult(pub)}
	fillRequest(&c.Request, ctx, r, e.cfg.Transport)
	// mcp-go has answered the client: Observe sends nothing more.
	_ = c.Observe(context.WithValue(ctx, callKey{}, c), e.cfg, e.handler)
}

// inputValidationFeedback returns the text of mcp-go's input-validation
// result (mcp.NewToolResultError(err.Error()), the only isError result
// mcp-go makes before the tool middleware), or false for a result that came
// through the adapter (its _meta[toolctx.ErrorMetaKey] says so). What the
// text says is never looked at.
func (e *engine) inputValidationFeedback(r *mcp.CallToolResult) (string, bool) {
	if !r.IsError || len(r.Content) != 1 {
		return "", false
	}
	if r.Meta != nil {
		if _, ours := r.Meta.AdditionalFields[toolctx.ErrorMetaKey]; ours {
			return "", false
		}
	}
	switch tc := r.Content[0].(type) {
	case mcp.TextContent:
		return tc.Text, true
	case *mcp.TextContent:
		if tc != nil {
			return tc.Text, true
		}
	}
	return "", false
}
