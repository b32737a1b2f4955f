package middleware

import (
	"context"
	"sync/atomic"

	"github.com/toolmw/toolmw/toolctx"
)

// Visibility returns the visibility predicate of guard, for an adapter's
// WithVisibility (mcpsdk's, mcpgo's): a tool is visible to the caller of
// req when guard would let req through to what it wraps. It asks guard
// itself, so that the chain and the lists agree whatever guard is made of,
// and visibility follows observe mode: under [Observe] every call goes
// through (noted would_reject), so every tool is visible, and the caller
// sees exactly what it saw before the guard was rolled out.
//
//	scopes := middleware.Observe(middleware.RequireScopes(policy)) // drop Observe to enforce
//	chain := middleware.New(audit, scopes, ...)
//	mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithVisibility(middleware.Visibility(scopes)))
//
// Visibility(RequireScopes(p)) is p.Allows ([ScopePolicy.Allows]);
// Visibility(When(m, guard)) and Visibility(New(a, b).Middleware()) work as
// the chain does. guard is run for each tool of each tools/list and for
// each tools/call (the adapter asks before the chain runs), around a
// handler that only notes that it was reached, with a context of its own
// and a copy of req: give it the guards that decide who may call what
// (RequireScopes, a When over a Matcher, your own), never guards that count
// calls or interceptors that record them (RateLimit, Bulkhead, Cache, the
// audit interceptor, otelmw), which would count or record every probe. A
// nil guard panics, at construction.
func Visibility(guard toolctx.Middleware) func(req *toolctx.Request) bool {
	if guard == nil {
		panic("middleware.Visibility: the guard is nil")
	}
	h := guard(visibilityProbe{})
	return func(req *toolctx.Request) bool {
		var reached atomic.Bool
		probe := *req // the guard must not change the adapter's request
		h.CallTool(context.WithValue(context.Background(), probeKey{}, &reached), &probe)
		return reached.Load()
	}
}

// probeKey is the context key of the flag [visibilityProbe] sets.
type probeKey struct{}

// visibilityProbe is what the guard of [Visibility] wraps: it notes that
// the call reached it.
type visibilityProbe struct{}

// probed is the result of a probe that got through: never sent.
var probed = toolctx.TextResult("visible")

func (visibilityProbe) CallTool(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
	if reached, ok := ctx.Value(probeKey{}).(*atomic.Bool); ok {
		reached.Store(true)
	}
	return probed
}
