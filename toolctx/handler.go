package toolctx

import (
	"context"
	"errors"
)

// ErrNilHandler is what a nil handler given to a constructor is, wrapped
// with the constructor's name: middleware.Chain.Then returns it, the
// adapters' AddTool functions too, and Chain.Middleware panics with it.
// One value, so that errors.Is(err, ErrNilHandler) holds whichever layer
// refused the handler.
var ErrNilHandler = errors.New("toolmw: nil handler")

// Handler handles one tool call. It must return a non-nil result; adapters
// and the core middleware treat a nil result as an internal failure.
type Handler interface {
	CallTool(ctx context.Context, req *Request) *CallResult
}

// HandlerFunc lets an ordinary function be a [Handler]:
// HandlerFunc(f).CallTool(ctx, req) is f(ctx, req).
type HandlerFunc func(ctx context.Context, req *Request) *CallResult

// CallTool calls f(ctx, req).
func (f HandlerFunc) CallTool(ctx context.Context, req *Request) *CallResult {
	return f(ctx, req)
}

// Middleware wraps a Handler in another. It is what an interceptor is, and
// what a chain of them is.
type Middleware func(Handler) Handler
