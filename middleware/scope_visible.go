package middleware

import (
	"slices"

	"github.com/toolmw/toolmw/toolctx"
)

// Allows reports whether [RequireScopes](p) would admit req: its tool needs
// no scope under p, or req's caller holds every scope it needs. It is the
// policy's visibility predicate: give it to the adapter (mcpsdk's or
// mcpgo's WithVisibility) with the same policy as RequireScopes, and a
// caller's tools/list shows only the tools it may call, while a call to
// another answers as an unknown tool does. It always enforces: to roll the
// policy out in observe mode, give the adapter [Visibility] of the
// observed guard instead, which follows [Observe].
func (p ScopePolicy) Allows(req *toolctx.Request) bool {
	need, ok := p.Tools[req.Tool]
	if !ok {
		need = p.Default
	}
	if len(need) == 0 {
		return true
	}
	if req.Identity == nil {
		return false
	}
	for _, s := range need {
		if !slices.Contains(req.Identity.Scopes, s) {
			return false
		}
	}
	return true
}
