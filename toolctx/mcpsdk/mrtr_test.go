package mcpsdk_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// mrtrRows records what the chain saw of each round.
type mrtrRows struct {
	mu   sync.Mutex
	rows []middleware.CallInfo
}

func (r *mrtrRows) after(_ context.Context, info middleware.CallInfo) {
	r.mu.Lock()
	r.rows = append(r.rows, info)
	r.mu.Unlock()
}

func (r *mrtrRows) snapshot() []middleware.CallInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]middleware.CallInfo(nil), r.rows...)
}

// noted is an interceptor that replaces every result (with a note), as
// Retry, Cache or ScrubSecrets do: the adapter then writes the chain's
// result, not the SDK's.
func noted(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return next.CallTool(ctx, req).WithNote("seen", "yes")
	})
}

var confirmSchema = map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}

// mrtrServer has the tool "confirm" twice over: "native" (an SDK
// handler) and "toolmw" (an mcpsdk.AddTool handler). Each asks for a
// confirmation on its first round, with the state "s1", and answers
// with the client's action when its answer and the state come back (the
// toolmw one has an output schema, which its input-required round is not
// held to).
func mrtrServer(t *testing.T, rows *mrtrRows, reqs *[]toolctx.Request, mu *sync.Mutex, mws ...toolctx.Middleware) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr"}, nil)
	s.AddTool(&mcp.Tool{Name: "native", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if ans, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); ok && req.Params.RequestState == "s1" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "confirmed: " + ans.Action}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Sure?", RequestedSchema: confirmSchema}},
				RequestState:  "s1",
			}, nil
		})
	params, err := json.Marshal(mcp.ElicitParams{Message: "Sure?", RequestedSchema: confirmSchema})
	require.NoError(t, err)
	require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "toolmw", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","required":["confirmed"]}`)}, toolctx.HandlerFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			mu.Lock()
			*reqs = append(*reqs, *req)
			mu.Unlock()
			if raw, ok := req.InputResponses["confirm"]; ok && req.RequestState == "s1" {
				var ans mcp.ElicitResult
				if err := json.Unmarshal(raw, &ans); err != nil {
					return toolctx.ErrorResult(err)
				}
				return toolctx.StructuredResult(map[string]string{"confirmed": ans.Action})
			}
			return toolctx.InputRequiredResult("s1", map[string]toolctx.InputRequest{"confirm": {Method: toolctx.MethodElicit, Params: params}})
		})))
	mcpsdk.Install(s, middleware.New(append([]toolctx.Middleware{middleware.After(rows.after)}, append(mws, noted)...)...).Middleware())
	return s
}

func connectWith(t *testing.T, s *mcp.Server, copts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, copts).Connect(context.Background(), ct, sopts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

func accept(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
}

// TestInputRequiredReachesTheClient: an input-required result, from a
// native or a toolmw handler, reaches a client of protocol 2026-07-28 with
// its requests, its state and its result type, even when an interceptor
// replaced the result (the adapter used to clear both then).
func TestInputRequiredReachesTheClient(t *testing.T) {
	rows := &mrtrRows{}
	var mu sync.Mutex
	var reqs []toolctx.Request
	cs := connectWith(t, mrtrServer(t, rows, &reqs, &mu), &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}, nil)
	for _, tool := range []string{"native", "toolmw"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
		require.NoError(t, err, tool)
		assert.True(t, res.NeedsInput(), "%s: the client sees an input-required result", tool)
		assert.Equal(t, "s1", res.RequestState, "%s: the state", tool)
		require.Contains(t, res.InputRequests, "confirm", tool)
		ep, ok := res.InputRequests["confirm"].(*mcp.ElicitParams)
		require.True(t, ok, "%s: an elicitation", tool)
		assert.Equal(t, "Sure?", ep.Message, tool)
		assert.Empty(t, res.Content, "%s: no content", tool)
		assert.False(t, res.IsError, tool)
	}
	got := rows.snapshot()
	require.Len(t, got, 2)
	for _, r := range got {
		assert.True(t, r.Outcome.InputRequired, "%s: the chain saw an input-required round", r.Details.Tool())
		assert.False(t, r.Outcome.Failed)
		assert.True(t, r.Result.NeedsInput())
	}
}

// TestMultiRoundTripEndToEnd: go-sdk's client fulfils the requests and
// retries, the handler gets the answer and the state; for a client of
// protocol 2026-07-28 each round is a tools/call of its own (a row each),
// for an older one the SDK's legacy bridge, inside the adapter, asks the
// client with a server-initiated elicitation and calls the handler again
// within the one tools/call (one row).
func TestMultiRoundTripEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name     string
		protocol string
		rounds   int
	}{
		{"2026-07-28", "", 2},
		{"2025-11-25", "2025-11-25", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tool := range []string{"native", "toolmw"} {
				rows := &mrtrRows{}
				var mu sync.Mutex
				var reqs []toolctx.Request
				cs := connectWith(t, mrtrServer(t, rows, &reqs, &mu, middleware.Rounds(middleware.RoundsConfig{Key: []byte("0123456789abcdef")})), &mcp.ClientOptions{ElicitationHandler: accept},
					&mcp.ClientSessionOptions{ProtocolVersion: tc.protocol})
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
				require.NoError(t, err, tool)
				require.False(t, res.IsError, tool)
				require.Len(t, res.Content, 1, tool)
				assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "accept", "%s: the handler got the answer and the state", tool)
				got := rows.snapshot()
				require.Len(t, got, tc.rounds, "%s: rows", tool)
				assert.False(t, got[len(got)-1].Outcome.Failed, tool)
				assert.False(t, got[len(got)-1].Outcome.InputRequired, "%s: the last round is the answer", tool)
				if tc.rounds == 2 {
					assert.True(t, got[0].Outcome.InputRequired, tool)
					assert.True(t, strings.HasPrefix(got[1].Request.RequestState, "tm1s."), "%s: the client echoed the state Rounds sealed", tool)
					assert.Contains(t, got[1].Request.InputResponses, "confirm", tool)
					of, _ := got[1].Result.Note(middleware.NoteRoundOf)
					assert.Equal(t, got[0].Details.CallID(), of, "%s: the second round's row names the first's call id", tool)
				}
				if tool == "toolmw" {
					mu.Lock()
					require.Len(t, reqs, 2, "the toolmw handler ran once per round")
					assert.Empty(t, reqs[0].RequestState)
					assert.Equal(t, "s1", reqs[1].RequestState)
					mu.Unlock()
				}
			}
		})
	}
}
