package outside

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// wouldRejects is the row's would_reject notes, sorted.
func wouldRejects(notes []toolctx.Note) []string {
	var out []string
	for _, n := range notes {
		if n.Key == middleware.NoteWouldReject {
			out = append(out, n.Value)
		}
	}
	slices.Sort(out)
	return out
}

// TestObserveOddCombinations attacks observe mode from outside, on both
// SDKs and every transport, with shapes its own tests do not use: a call
// all six guards observed at once would each have stopped (over the rate,
// no free slot, too many argument bytes, no scope, a result both too
// large and secret-bearing), and guards observed inside and around an
// enforced guard's rejection. The caller gets what the handler made, byte
// for byte where observe mode is the whole story; the row has every
// would_reject note; otelmw counts each.
func TestObserveOddCombinations(t *testing.T) {
	secret := "postgres://app:CANARY-observe@db.internal/prod"
	huge := strings.Repeat("row ", 3000) + secret // over every limit below, secret-bearing
	each(t, func(t *testing.T, sdk, tr string) {
		otel, reader := meteredOtel(t)
		var kept rows

		held, release := make(chan struct{}), make(chan struct{})
		all := func(mode middleware.ResultLimitMode) toolctx.Middleware {
			return middleware.Observe(middleware.New(
				middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1, Key: middleware.ToolKey}),
				middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1}),
				middleware.MaxArgBytes(32),
				middleware.RequireScopes(middleware.ScopePolicy{Default: []string{"admin"}}),
				middleware.MaxResultBytes(256, mode),
				middleware.ScrubSecrets(middleware.ScrubConfig{}),
			).Middleware())
		}
		chain := middleware.New(
			audit.Interceptor(audit.EmitterFunc(kept.emit)),
			otel,
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
			identify,
			// Every guard observed at once, around one bulkhead the
			// "hold" call fills.
			middleware.When(middleware.Tools("all", "hold"), all(middleware.ResultTruncate)),
			// An enforced result limit around an observed scrubber: the
			// scrubber decides, then the limit rejects.
			middleware.When(middleware.Tools("inside-rejection"), middleware.MaxResultBytes(256, middleware.ResultReject)),
			middleware.When(middleware.Tools("inside-rejection"), middleware.Observe(middleware.ScrubSecrets(middleware.ScrubConfig{}))),
			// An observed scope check around an enforced rate limit that
			// rejects: the note is on the rate limit's rejection.
			middleware.When(middleware.Tools("around-rejection"), middleware.Observe(middleware.RequireScopes(middleware.ScopePolicy{Default: []string{"admin"}}))),
			middleware.When(middleware.Tools("around-rejection"), middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1, Key: middleware.ToolKey})),
		)
		bigTool := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			return toolctx.TextResult(huge)
		})
		c := serve(t, sdk, tr, chain, map[string]tool{
			"all": {h: bigTool},
			"hold": {h: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				close(held)
				<-release
				return toolctx.TextResult("held")
			})},
			"inside-rejection": {h: bigTool},
			"around-rejection": {h: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.TextResult("ran")
			})},
		})
		admin := withIdentity("root", "admin")
		bigArgs := `{"pad":"` + strings.Repeat("a", 64) + `"}`

		// The rate limit's token, taken by an admitted call: the next
		// call to "all" is over the rate.
		first := c.Call(t, "all", `{}`, admin)
		isErr, texts, _ := first.decoded(t)
		require.False(t, isErr)
		require.Equal(t, []string{huge}, texts, "observed: the huge, secret-bearing result unchanged")
		// "hold" fills the bulkhead (it has its own rate bucket: ToolKey).
		holdDone := make(chan answer, 1)
		go func() { holdDone <- c.Call(t, "hold", `{}`, admin) }()
		<-held
		second := c.Call(t, "all", bigArgs, withIdentity("guest"))
		close(release)
		<-holdDone
		isErr, texts, _ = second.decoded(t)
		assert.False(t, isErr, "every observed guard would have stopped it; it ran")
		assert.Equal(t, []string{huge}, texts, "and its result is the handler's, neither truncated nor scrubbed")

		inside := c.Call(t, "inside-rejection", `{}`, admin)
		isErr, texts, _ = inside.decoded(t)
		assert.True(t, isErr, "the enforced result limit rejects")
		assert.NotContains(t, strings.Join(texts, ""), "CANARY")

		c.Call(t, "around-rejection", `{}`, withIdentity("guest"))
		around := c.Call(t, "around-rejection", `{}`, withIdentity("guest"))
		isErr, _, _ = around.decoded(t)
		assert.True(t, isErr, "the enforced rate limit rejects the second call")

		byTool := map[string][]audit.Record{}
		for _, r := range kept.take() {
			byTool[r.Tool] = append(byTool[r.Tool], r)
		}
		require.Len(t, byTool["all"], 2)
		assert.Equal(t, []string{"max_result_bytes", "scrub_secrets"}, wouldRejects(byTool["all"][0].Notes),
			"admitted before the handler, its result noted after: %v", byTool["all"][0].Notes)
		assert.Equal(t, []string{"bulkhead", "max_arg_bytes", "max_result_bytes", "rate_limit", "require_scopes", "scrub_secrets"},
			wouldRejects(byTool["all"][1].Notes), "every guard that would have stopped it: %v", byTool["all"][1].Notes)
		require.Len(t, byTool["inside-rejection"], 1)
		assert.Equal(t, []string{"scrub_secrets"}, wouldRejects(byTool["inside-rejection"][0].Notes),
			"the observed scrubber decided before the limit rejected: %v", byTool["inside-rejection"][0].Notes)
		assert.Equal(t, errs.CodeResultTooLarge, byTool["inside-rejection"][0].Code)
		require.Len(t, byTool["around-rejection"], 2)
		for i, r := range byTool["around-rejection"] {
			assert.Equal(t, []string{"require_scopes"}, wouldRejects(r.Notes), "call %d: %v", i, r.Notes)
		}
		assert.Equal(t, errs.CodeRateLimited, byTool["around-rejection"][1].Code)
		for _, rs := range byTool {
			for _, r := range rs {
				for _, n := range r.Notes {
					assert.NotContains(t, n.Value, "CANARY", "a note never holds the secret")
				}
			}
		}
		assert.Equal(t, map[string]int64{
			"bulkhead": 1, "max_arg_bytes": 1, "max_result_bytes": 2, "rate_limit": 1, "scrub_secrets": 3,
			"require_scopes": 3,
		}, counterBy(t, reader, "toolmw.guard.would_reject", "toolmw.guard"), "otelmw counts every note")
	})
}
