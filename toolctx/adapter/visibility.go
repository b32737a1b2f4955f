package adapter

import (
	"fmt"

	"github.com/toolmw/toolmw/toolctx"
)

// WithVisibility hides from a caller the tools it may not call: visible
// reports whether the caller of req (its Tool, Identity, Transport,
// SessionID, as the adapter fills them for a tools/call) may see and call
// req.Tool. An adapter given it leaves each tool for which visible returns
// false out of that caller's tools/list, asked per request (so two callers of one
// server, or one stateful session's successive requests under other
// identities, each get their own list), and answers a tools/call of a
// hidden tool exactly as the SDK answers one of a tool the server does not
// have: the same protocol error, code and message, so that no answer tells
// a hidden tool from a missing one. The chain still runs for such a call
// (a guard and the audit row see the attempt, with the guard's code), but
// the tool does not.
//
// Give it the predicate of the policy the chain enforces, so that a caller
// sees exactly what it may call:
//
//	scopes := middleware.ScopePolicy{Tools: map[string][]string{"deploy": {"deploy:prod"}}}
//	mcpsdk.Install(s, middleware.New(middleware.RequireScopes(scopes)).Middleware(),
//		mcpsdk.WithVisibility(scopes.Allows))
//
// Hiding is enforcement: while the policy's guard runs in observe mode
// (middleware.Observe), leave WithVisibility out, or the caller loses the
// tools the guard only notes. A middleware.Matcher is such a predicate too. visible must be fast, must
// not change req, and is called for every tool of every list; one that
// panics hides the tool (the panic is logged to the fallback logger). A nil
// visible is a mistake: leave the option out for every tool visible.
func WithVisibility(visible func(req *toolctx.Request) bool) Option {
	return func(c *Config) {
		if visible == nil {
			c.fail("WithVisibility(nil): pass a predicate, or leave the option out for every tool visible")
			return
		}
		c.Visible = visible
	}
}

// Hidden reports whether req's tool is hidden from its caller under
// [WithVisibility]: false when the option was not given. A predicate that
// panics hides the tool, and the panic is logged.
func (c *Config) Hidden(req *toolctx.Request) (hidden bool) {
	if c.Visible == nil {
		return false
	}
	defer func() {
		if v := recover(); v != nil {
			hidden = true
			msg := fmt.Sprint(v) // fmt survives a value whose Error panics
			Run(func() {
				c.logger().Error(c.Name+": the visibility predicate panicked; the tool is hidden", "tool", req.Tool, "panic", msg)
			})
		}
	}()
	return !c.Visible(req)
}

// Visible returns the tools of a tools/list that caller (the Request an
// adapter fills for the list's caller, without a tool) may see: each tool
// named (name's false drops a tool) whose name, in caller.Tool,
// [Config.Hidden] does not hide.
func Visible[T any](c *Config, caller toolctx.Request, tools []T, name func(T) (string, bool)) []T {
	out := make([]T, 0, len(tools))
	for _, t := range tools {
		r := caller
		var ok bool
		if r.Tool, ok = name(t); ok && !c.Hidden(&r) {
			out = append(out, t)
		}
	}
	return out
}
