package middleware_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// A scope with white space in it can never be held (a token's scopes are
// separated by spaces): the policy fails at construction, naming it.
func TestRequireScopesWhiteSpaceScopeFailsAtConstruction(t *testing.T) {
	for _, s := range []string{" admin", "admin ", "ad min", "admin\t", "\nadmin", "admin\u00a0"} {
		assert.PanicsWithValue(t, `middleware.RequireScopes: purge has the scope `+quote(s)+`, with white space, which no caller can hold (scopes are separated by spaces)`,
			func() { middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"purge": {s}}}) }, "%q", s)
	}
	assert.Panics(t, func() { middleware.RequireScopes(middleware.ScopePolicy{Default: []string{"read write"}}) }, "Default too")
}

func quote(s string) string { return strconv.Quote(s) }

// A scope the policy lists twice is asked for, and named as missing, once.
func TestRequireScopesRepeatedScopeNamedOnce(t *testing.T) {
	h := middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"purge": {"admin", "ops", "admin"}}})(handlerReturning(toolctx.TextResult("ran")))
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "purge", Identity: &toolctx.Identity{Subject: "a"}})
	require.True(t, res.IsError)
	pub, _ := errs.Normalize(res.Cause())
	assert.Equal(t, `calling "purge" needs the scopes "admin", "ops"`, pub.Message)
	assert.Equal(t, map[string]any{"missing_scopes": []string{"admin", "ops"}}, pub.Detail)
}

// Allows is RequireScopes's verdict, call for call, over random policies
// and callers whose scopes differ from the policy's by case, by
// surrounding white space, by repeats; scopes are compared exactly (RFC
// 6749: case-sensitive), so "Admin" is not "admin".
func TestAllowsAgreesWithRequireScopes(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 9))
	pool := []string{"admin", "Admin", "ADMIN", "read", "read:all", "ops", "x"}
	variants := func(s string) []string { return []string{s, " " + s, s + " ", s + s, s} }
	pick := func(max int, spaced bool) []string {
		var out []string
		for range rng.IntN(max + 1) {
			s := pool[rng.IntN(len(pool))]
			if spaced {
				v := variants(s)
				s = v[rng.IntN(len(v))]
			}
			out = append(out, s)
		}
		return out
	}
	for i := range 3000 {
		p := middleware.ScopePolicy{Tools: map[string][]string{"t": pick(3, false), "u": pick(2, false)}}
		if rng.IntN(2) == 0 {
			p.Default = pick(2, false)
		}
		var id *toolctx.Identity
		if rng.IntN(5) > 0 {
			id = &toolctx.Identity{Subject: "s", Scopes: pick(4, true)}
		}
		tool := []string{"t", "u", "other", "T"}[rng.IntN(4)]
		req := &toolctx.Request{Tool: tool, Identity: id}
		ran := false
		res := middleware.RequireScopes(p)(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			ran = true
			return toolctx.TextResult("ran")
		})).CallTool(context.Background(), req)
		require.Equal(t, ran, p.Allows(req), "case %d: policy %+v, tool %q, identity %+v: Allows must be RequireScopes's verdict", i, p, tool, id)
		if !ran {
			code := errs.CodeOf(res.Cause())
			require.Contains(t, []errs.Code{errs.CodeUnauthenticated, errs.CodePermissionDenied}, code, "case %d", i)
		}
	}
}
