package middleware

import (
	"fmt"

	"github.com/toolmw/toolmw/toolctx"
)

// Chain is an immutable list of interceptors. The zero Chain is empty and
// ready to use.
type Chain struct {
	ms []toolctx.Middleware
}

// New returns a chain of the given interceptors, first outermost.
// New(m1, m2, m3).Then(h) is m1(m2(m3(h))). Nil interceptors are skipped.
func New(ms ...toolctx.Middleware) Chain {
	return Chain{ms: appendNonNil(nil, ms)}
}

func appendNonNil(dst, ms []toolctx.Middleware) []toolctx.Middleware {
	for _, m := range ms {
		if m != nil {
			dst = append(dst, m)
		}
	}
	return dst
}

// Then returns h wrapped in the chain: New(m1, m2, m3).Then(h) is
// m1(m2(m3(h))). A nil h, or an interceptor that returns a nil handler, is
// an error wrapping [toolctx.ErrNilHandler], not a silent default. Then may be
// called any number of times; each call wraps h anew.
func (c Chain) Then(h toolctx.Handler) (toolctx.Handler, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: Chain.Then was given nil", toolctx.ErrNilHandler)
	}
	return wrap(c.ms, h, "Chain.Then")
}

// wrap is ms applied to h, innermost last; an interceptor that returns
// nil is an error naming it and where (ctor) it was found.
func wrap(ms []toolctx.Middleware, h toolctx.Handler, ctor string) (toolctx.Handler, error) {
	for i := len(ms) - 1; i >= 0; i-- {
		if h = ms[i](h); h == nil {
			// A broken interceptor: report it here rather than as a nil
			// dereference on the first call.
			return nil, fmt.Errorf("%w: %s: interceptor %d of %d returned a nil handler", toolctx.ErrNilHandler, ctor, i+1, len(ms))
		}
	}
	return h, nil
}

// ThenFunc is Then(toolctx.HandlerFunc(fn)); a nil fn is an error.
func (c Chain) ThenFunc(fn toolctx.HandlerFunc) (toolctx.Handler, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: Chain.ThenFunc was given nil", toolctx.ErrNilHandler)
	}
	return c.Then(fn)
}

// Append returns a new chain with ms after c's interceptors (so inside
// them). c is unchanged: New(m1).Append(m2, m3) is New(m1, m2, m3).
func (c Chain) Append(ms ...toolctx.Middleware) Chain {
	out := make([]toolctx.Middleware, 0, len(c.ms)+len(ms))
	out = append(out, c.ms...)
	return Chain{ms: appendNonNil(out, ms)}
}

// Extend returns a new chain with d's interceptors after c's. Neither is
// changed: New(m1).Extend(New(m2, m3)) is New(m1, m2, m3).
func (c Chain) Extend(d Chain) Chain {
	return c.Append(d.ms...)
}

// Len returns the number of interceptors in c.
func (c Chain) Len() int { return len(c.ms) }

// Middleware returns the chain as one [toolctx.Middleware], the form the
// adapters take: c.Middleware()(h) is the handler c.Then(h) returns. A
// toolctx.Middleware cannot return an error, so the mistakes Then returns
// (a nil handler, which only a broken adapter would pass, an interceptor
// that returns a nil handler) are panics there, with the same error
// (errors.Is(v, toolctx.ErrNilHandler)), when the adapter wraps the handler: at
// construction still, never at the first call.
func (c Chain) Middleware() toolctx.Middleware {
	ms := c.ms
	return func(h toolctx.Handler) toolctx.Handler {
		if h == nil {
			panic(fmt.Errorf("%w: Chain.Middleware was applied to nil", toolctx.ErrNilHandler))
		}
		h, err := wrap(ms, h, "Chain.Middleware")
		if err != nil {
			panic(err)
		}
		return h
	}
}
