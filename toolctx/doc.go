// Package toolctx is the model of one MCP tool call in toolmw: a [*Request]
// in, a [*CallResult] out, and the [Handler] that turns one into the other,
// in the style of net/http.
// See docs/chain.md (handlers, interceptors, progress and log messages).
//
//	type Handler interface {
//		CallTool(ctx context.Context, req *Request) *CallResult
//	}
//
// A [Middleware] wraps a Handler; package middleware composes them into
// chains, and the adapters in toolctx/mcpsdk and toolctx/mcpgo run a chain
// inside an MCP server.
//
// A CallResult keeps the raw error of a failed call in an unexported field.
// Server-side code reads it with [CallResult.Cause]; encoders, fmt and slog
// never see it, and the only way out of the process is through an adapter,
// which writes public fields only. That is how toolmw keeps its rule: the
// audit row may name the cause; the caller may not.
//
// [Typed] turns a typed function into a Handler, decoding the arguments into
// its input type and encoding its output as structured content.
//
// [Progress] and [Log] send a call's progress and log messages to the
// client that made it, through the [Notifier] an adapter puts in the call's
// context; what a handler sends this way is public by its choice, and
// toolmw adds nothing to it.
package toolctx
