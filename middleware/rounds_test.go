package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

var roundsKey = []byte("0123456789abcdef0123456789abcdef")

// confirmTool asks for a confirmation on its first round, with its own
// state "inner", and answers "done" when the state comes back; seen
// records the Request it got each round.
func confirmTool(seen *[]toolctx.Request) toolctx.HandlerFunc {
	return func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		*seen = append(*seen, *req)
		if req.RequestState == "inner" {
			return toolctx.TextResult("done")
		}
		return toolctx.InputRequiredResult("inner", map[string]toolctx.InputRequest{"confirm": {Method: toolctx.MethodElicit, Params: json.RawMessage(`{"message":"Sure?"}`)}})
	}
}

// next is the client's next round: a new call answering res.
func next(first *toolctx.Request, state string) *toolctx.Request {
	r := *first
	r.CallID = adapter.NewCallID()
	r.RequestState = state
	r.InputResponses = map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept"}`)}
	return &r
}

func TestRoundsJoinsAndSeals(t *testing.T) {
	for _, key := range [][]byte{nil, roundsKey} {
		t.Run(map[bool]string{false: "clear", true: "sealed"}[key != nil], func(t *testing.T) {
			var rows []middleware.CallInfo
			var seen []toolctx.Request
			h, err := middleware.New(
				middleware.After(func(_ context.Context, info middleware.CallInfo) { rows = append(rows, info) }),
				middleware.Rounds(middleware.RoundsConfig{Key: key}),
			).Then(confirmTool(&seen))
			require.NoError(t, err)

			first := newReq("transfer")
			res := h.CallTool(context.Background(), first)
			require.True(t, res.NeedsInput())
			state := res.InputRequired.State
			assert.NotEqual(t, "inner", state, "the client gets the wrapped state")
			assert.NotContains(t, state, "inner", "nor the handler's in plain sight")
			if key != nil {
				assert.True(t, strings.HasPrefix(state, "tm1s."), state)
			}
			res = h.CallTool(context.Background(), next(first, state))
			require.False(t, res.Failed(), "%+v", res)
			assert.Equal(t, "done", res.Content[0].(*toolctx.Text).Text)

			require.Len(t, seen, 2)
			assert.Zero(t, seen[0].Round, "a first round is not told")
			assert.Empty(t, seen[0].RoundOf)
			assert.Equal(t, "inner", seen[1].RequestState, "the handler gets its own state back")
			assert.Equal(t, 2, seen[1].Round)
			assert.Equal(t, first.CallID, seen[1].RoundOf, "the second round knows the first's call id")

			require.Len(t, rows, 2)
			n, _ := rows[0].Result.Note(middleware.NoteRound)
			assert.Equal(t, "1", n)
			assert.True(t, rows[0].Outcome.InputRequired)
			n, _ = rows[1].Result.Note(middleware.NoteRound)
			assert.Equal(t, "2", n)
			of, ok := rows[1].Result.Note(middleware.NoteRoundOf)
			assert.True(t, ok)
			assert.Equal(t, rows[0].Details.CallID(), of, "the rows are joined by the first round's call id")
		})
	}
}

// TestRoundsRefusesForeignStates: with a key, a state that was tampered
// with, made up, made for another tool or caller, or too old is the public
// invalid-arguments failure; the row names why, and the handler never
// runs.
func TestRoundsRefusesForeignStates(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return clock }
	var seen []toolctx.Request
	var rows []middleware.CallInfo
	h, err := middleware.New(
		middleware.After(func(_ context.Context, info middleware.CallInfo) { rows = append(rows, info) }),
		middleware.RoundsWithClock(middleware.RoundsConfig{Key: roundsKey, MaxAge: time.Hour}, now),
	).Then(confirmTool(&seen))
	require.NoError(t, err)
	first := newReq("transfer")
	state := h.CallTool(context.Background(), first).InputRequired.State

	// Another base64url letter in the sealed bytes (flipping a bit could
	// make a character outside the alphabet, which is a different error).
	flip := []byte(state)
	if i := len(flip) - 3; flip[i] == 'A' {
		flip[i] = 'B'
	} else {
		flip[i] = 'A'
	}
	otherTool := next(first, state)
	otherTool.Tool = "delete_everything"
	otherCaller := next(first, state)
	otherCaller.Identity = &toolctx.Identity{Subject: "mallory"}
	clear := "tm1." + strings.TrimPrefix(state, "tm1s.")
	cases := map[string]struct {
		req  *toolctx.Request
		why  string
		late bool
	}{
		"tampered":     {next(first, string(flip)), "does not open", false},
		"made up":      {next(first, "please-let-me-in"), "not made by Rounds", false},
		"not sealed":   {next(first, clear), "not sealed", false},
		"other tool":   {otherTool, "does not open", false},
		"other caller": {otherCaller, "does not open", false},
		"too old":      {next(first, state), "over MaxAge", true},
	}
	for name, tc := range cases {
		seen, rows = nil, nil
		if tc.late {
			clock = clock.Add(2 * time.Hour)
		}
		res := h.CallTool(context.Background(), tc.req)
		require.True(t, res.Failed(), name)
		o := toolctx.Classify(context.Background(), res, errs.Normalizer{})
		assert.Equal(t, errs.CodeInvalidArguments, o.Public.Code, "%s: a public invalid-arguments failure", name)
		assert.Equal(t, "the request state is not valid: call the tool again without it", o.Public.Message, name)
		assert.True(t, o.Scrubbed, "%s: the row gets the cause, the caller only the public message", name)
		assert.Empty(t, seen, "%s: the handler did not run", name)
		require.Len(t, rows, 1, name)
		assert.Contains(t, errs.Describe(rows[0].Cause()), tc.why, "%s: the row names why", name)
	}
}

// TestRoundsWithoutKeyPassesOtherStates: without a key, a state Rounds did
// not make (one from before it was added) reaches the handler as it came.
func TestRoundsWithoutKeyPassesOtherStates(t *testing.T) {
	var seen []toolctx.Request
	h, err := middleware.New(middleware.Rounds(middleware.RoundsConfig{})).Then(confirmTool(&seen))
	require.NoError(t, err)
	res := h.CallTool(context.Background(), next(newReq("transfer"), "inner"))
	require.False(t, res.Failed())
	require.Len(t, seen, 1)
	assert.Equal(t, "inner", seen[0].RequestState)
	assert.Equal(t, 0, seen[0].Round, "the round is unknown")
	n, _ := res.Note(middleware.NoteRound)
	assert.Equal(t, "?", n)
}

func TestRoundsConstruction(t *testing.T) {
	assert.Panics(t, func() { middleware.Rounds(middleware.RoundsConfig{Key: []byte("short")}) }, "a key AES cannot take")
	assert.Panics(t, func() { middleware.Rounds(middleware.RoundsConfig{Key: roundsKey, MaxAge: -time.Second}) }, "a negative MaxAge")
	assert.NotPanics(t, func() { middleware.Rounds(middleware.RoundsConfig{}) })
}

// TestRoundsTellDiagnostics: inside Rounds, a diagnostics event of a later
// round names the round and the first round's call id.
func TestRoundsTellDiagnostics(t *testing.T) {
	var events []middleware.DiagnosticEvent
	h, err := middleware.New(
		middleware.Rounds(middleware.RoundsConfig{Key: roundsKey}),
		middleware.Diagnostics(func(_ context.Context, ev middleware.DiagnosticEvent) { events = append(events, ev) }),
		middleware.Normalize(errs.Normalizer{}),
	).Then(toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		if req.RequestState == "" {
			return toolctx.InputRequiredResult("inner", map[string]toolctx.InputRequest{"confirm": {Method: toolctx.MethodElicit}})
		}
		return toolctx.ErrorResult(errors.New("dial tcp 10.0.0.9:5432: connection refused"))
	}))
	require.NoError(t, err)
	first := newReq("transfer")
	res := h.CallTool(context.Background(), first)
	require.True(t, res.NeedsInput())
	assert.Empty(t, events, "an input-required round is no diagnostic")
	h.CallTool(context.Background(), next(first, res.InputRequired.State))
	require.Len(t, events, 1)
	assert.Equal(t, 2, events[0].Details.Round())
	assert.Equal(t, first.CallID, events[0].Details.RoundOf(), "the event joins the call's first round")
}

// BenchmarkRounds is what Rounds costs a call: an ordinary call (nothing
// to wrap), and a round trip (seal the state, then open it on the next
// round), with and without a key.
func BenchmarkRounds(b *testing.B) {
	ask := map[string]toolctx.InputRequest{"confirm": {Method: toolctx.MethodElicit, Params: json.RawMessage(`{"message":"Sure?"}`)}}
	for _, key := range [][]byte{nil, roundsKey} {
		name := map[bool]string{false: "clear", true: "sealed"}[key != nil]
		h, err := middleware.New(middleware.Rounds(middleware.RoundsConfig{Key: key})).Then(toolctx.HandlerFunc(
			func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
				if req.RequestState == "" && req.Tool == "ask" {
					return toolctx.InputRequiredResult("inner", ask)
				}
				return toolctx.TextResult("ok")
			}))
		require.NoError(b, err)
		b.Run(name+"/ordinary", func(b *testing.B) {
			req := newReq("plain")
			b.ReportAllocs()
			for b.Loop() {
				h.CallTool(context.Background(), req)
			}
		})
		b.Run(name+"/round-trip", func(b *testing.B) {
			first := newReq("ask")
			b.ReportAllocs()
			for b.Loop() {
				res := h.CallTool(context.Background(), first)
				second := *first
				second.RequestState = res.InputRequired.State
				h.CallTool(context.Background(), &second)
			}
		})
	}
}

// TestRoundsLeavesOrdinaryCalls: a call that is no multi-round-trip call
// passes through Rounds as it is: the same Request, the same result, no
// note.
func TestRoundsLeavesOrdinaryCalls(t *testing.T) {
	want := toolctx.TextResult("ok")
	req := newReq("plain")
	h, err := middleware.New(middleware.Rounds(middleware.RoundsConfig{Key: roundsKey})).Then(toolctx.HandlerFunc(
		func(_ context.Context, got *toolctx.Request) *toolctx.CallResult {
			assert.Same(t, req, got, "the Request is not copied")
			return want
		}))
	require.NoError(t, err)
	assert.Same(t, want, h.CallTool(context.Background(), req))
}
