package middleware_test

import (
	"context"
	"encoding/json"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// inputRequired is an input-required result whose elicitation message
// looks like a secret to ScrubSecrets (the user is asked about it) and
// whose requests are larger than the tightest MaxResultBytes below.
func inputRequired() *toolctx.CallResult {
	params, _ := json.Marshal(map[string]any{
		"message":         "Confirm the transfer to account sk_live_4eC39HqLyjWDarjtT1zdp7dc?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean", "description": string(make([]byte, 300))}}},
	})
	return toolctx.InputRequiredResult("state-1", map[string]toolctx.InputRequest{
		"confirm": {Method: toolctx.MethodElicit, Params: params},
	})
}

// TestInputRequiredPassesThrough: an input-required result passes through
// every interceptor unchanged, and none takes it for a success or a
// failure: no diagnostics event, no retry, no cache entry, nothing scrubbed
// or cut, and After sees an input-required outcome.
func TestInputRequiredPassesThrough(t *testing.T) {
	want := inputRequired()
	var rows []middleware.CallInfo
	var events []middleware.DiagnosticEvent
	var runs atomic.Int32
	chain := middleware.New(
		middleware.After(func(_ context.Context, info middleware.CallInfo) { rows = append(rows, info) }),
		middleware.Diagnostics(func(_ context.Context, ev middleware.DiagnosticEvent) { events = append(events, ev) }),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.Timeout(time.Hour),
		middleware.RateLimit(middleware.RateLimitConfig{Rate: 1000, Burst: 10}),
		middleware.Bulkhead(middleware.BulkheadConfig{Limit: 4}),
		middleware.MaxResultBytes(64, middleware.ResultReject),
		middleware.MaxResultBytes(256, middleware.ResultTruncate),
		middleware.Cache(middleware.CacheConfig{TTL: time.Hour}),
		middleware.ScrubSecrets(middleware.ScrubConfig{Rules: []middleware.ScrubRule{{Name: "any", Pattern: regexp.MustCompile(`(?s).+`)}}}),
		middleware.Retry(middleware.RetryConfig{InitialBackoff: time.Nanosecond, Retryable: func(context.Context, middleware.RetryAttempt) bool { return true }}),
	)
	h, err := chain.Then(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		runs.Add(1)
		return want
	}))
	require.NoError(t, err)
	for i := range 2 {
		got := h.CallTool(context.Background(), newReq("transfer"))
		require.True(t, got.NeedsInput(), "call %d: still input-required", i)
		assert.False(t, got.Failed(), "call %d: not a failure", i)
		assert.Same(t, want.InputRequired, got.InputRequired, "call %d: the requests and state, untouched", i)
		assert.Empty(t, got.Content, "call %d: no content added", i)
	}
	assert.EqualValues(t, 2, runs.Load(), "run once per call: never retried, never answered from the cache")
	assert.Empty(t, events, "no diagnostics event")
	require.Len(t, rows, 2)
	for _, r := range rows {
		assert.True(t, r.Outcome.InputRequired, "After sees an input-required outcome")
		assert.False(t, r.Outcome.Failed)
		assert.NoError(t, r.Cause())
	}
}

// TestCacheNeverAnswersALaterRound: the rounds of a multi-round-trip call
// share the tool and arguments; a later round's answer depends on the
// client's input (a confirmation), so it is neither stored nor served, and
// the next first round asks again.
func TestCacheNeverAnswersALaterRound(t *testing.T) {
	var runs atomic.Int32
	h, err := middleware.New(middleware.Cache(middleware.CacheConfig{TTL: time.Hour})).Then(toolctx.HandlerFunc(
		func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
			runs.Add(1)
			if req.InputResponses["confirm"] == nil {
				return inputRequired()
			}
			return toolctx.TextResult("transferred")
		}))
	require.NoError(t, err)
	first := newReq("transfer")
	require.True(t, h.CallTool(context.Background(), first).NeedsInput())
	retry := *first
	retry.CallID = adapter.NewCallID()
	retry.RequestState = "state-1"
	retry.InputResponses = map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}
	res := h.CallTool(context.Background(), &retry)
	require.False(t, res.Failed())
	again := *first
	again.CallID = adapter.NewCallID()
	assert.True(t, h.CallTool(context.Background(), &again).NeedsInput(), "a new call is asked for its confirmation again, not answered with the confirmed round's result")
	assert.EqualValues(t, 3, runs.Load(), "every round ran the handler")
}
