package middleware

import (
	"context"
	"slices"

	"github.com/toolmw/toolmw/toolctx"
)

// Matcher selects calls by their request (tool name, transport, identity,
// ...). It must be fast and must not change the request.
type Matcher func(req *toolctx.Request) bool

// Tools matches calls to any of the named tools.
func Tools(names ...string) Matcher {
	set := slices.Clone(names)
	return func(req *toolctx.Request) bool { return slices.Contains(set, req.Tool) }
}

// Not matches the calls m does not.
func Not(m Matcher) Matcher {
	return func(req *toolctx.Request) bool { return !m(req) }
}

// When applies m only to the calls match selects; other calls go straight
// to the next handler:
//
//	middleware.When(middleware.Tools("search"), middleware.Timeout(2*time.Second))
//
// m wraps the next handler once, at construction. A nil match or m is a
// construction mistake: When panics at once rather than at the first call.
func When(match Matcher, m toolctx.Middleware) toolctx.Middleware {
	switch {
	case match == nil:
		panic("middleware.When: the matcher is nil")
	case m == nil:
		panic("middleware.When: the interceptor is nil")
	}
	return func(next toolctx.Handler) toolctx.Handler {
		wrapped := m(next)
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if match(req) {
				return wrapped.CallTool(ctx, req)
			}
			return next.CallTool(ctx, req)
		})
	}
}
