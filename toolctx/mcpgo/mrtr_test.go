package mcpgo_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// noted replaces every result (with a note), as Retry, Cache or
// ScrubSecrets do: the adapter then writes the chain's result.
func noted(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return next.CallTool(ctx, req).WithNote("seen", "yes")
	})
}

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

// mrtrServer has "native" (an mcp-go handler) and "toolmw" (an
// mcpgo.AddTool handler with an output schema): each asks for a
// confirmation with the state "s1" on its first round and answers with the
// client's action when the answer and the state come back.
func mrtrServer(t *testing.T, rows *mrtrRows, mws ...toolctx.Middleware) *server.MCPServer {
	s := server.NewMCPServer("mrtr", "1.0.0",
		mcpgo.ServerOption(middleware.New(append([]toolctx.Middleware{middleware.After(rows.after)}, append(mws, noted)...)...).Middleware()),
		server.WithElicitation(),
	)
	ask := mcp.ElicitationParams{Message: "Sure?", RequestedSchema: map[string]any{"type": "object"}}
	s.AddTool(mcp.NewTool("native"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if ans := server.ElicitationResponse(req.Params.InputResponses, "confirm"); ans != nil && req.Params.RequestState == "s1" {
			return mcp.NewToolResultText("confirmed: " + string(ans.Action)), nil
		}
		return server.NewInputRequestBuilder("s1").Elicit("confirm", ask).ToolResult(), nil
	})
	params, err := json.Marshal(ask)
	require.NoError(t, err)
	tool := mcp.NewTool("toolmw", mcp.WithOutputSchema[struct {
		Confirmed string `json:"confirmed"`
	}]())
	require.NoError(t, mcpgo.AddTool(s, tool, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		if raw, ok := req.InputResponses["confirm"]; ok && req.RequestState == "s1" {
			var ans mcp.ElicitationResult
			if err := json.Unmarshal(raw, &ans); err != nil {
				return toolctx.ErrorResult(err)
			}
			return toolctx.StructuredResult(map[string]string{"confirmed": string(ans.Action)})
		}
		return toolctx.InputRequiredResult("s1", map[string]toolctx.InputRequest{"confirm": {Method: toolctx.MethodElicit, Params: params}})
	})))
	return s
}

type acceptAll struct{}

func (acceptAll) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{}}}, nil
}

// answers records the result of every tools/call the client sent.
type answers struct {
	transport.Interface
	mu      sync.Mutex
	results []json.RawMessage
}

func (a *answers) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := a.Interface.SendRequest(ctx, req)
	if err == nil && resp != nil && req.Method == string(mcp.MethodToolsCall) {
		a.mu.Lock()
		a.results = append(a.results, append(json.RawMessage(nil), resp.Result...))
		a.mu.Unlock()
	}
	return resp, err
}

func (a *answers) first(t *testing.T) *mcp.CallToolResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	require.NotEmpty(t, a.results, "a tools/call was answered")
	res, err := mcp.ParseCallToolResult(&a.results[0])
	require.NoError(t, err)
	return res
}

// mrtrClient is an in-process client of s (of protocol 2025-11-25 when
// legacy) that accepts every elicitation, and what it was answered.
func mrtrClient(t *testing.T, s *server.MCPServer, legacy bool) (*client.Client, *answers) {
	a := &answers{Interface: transport.NewInProcessTransportWithOptions(s, transport.WithElicitationHandler(acceptAll{}))}
	opts := []client.ClientOption{client.WithElicitationHandler(acceptAll{})}
	if legacy {
		opts = append(opts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	c := client.NewClient(a, opts...)
	initialize(t, c)
	t.Cleanup(func() { _ = c.Close() })
	return c, a
}

// TestInputRequiredReachesTheClient: an input-required result, from a
// native or a toolmw handler (one with an output schema too), reaches a
// client of protocol 2026-07-28 with its requests, its state and its result
// type, even when an interceptor replaced the result.
func TestInputRequiredReachesTheClient(t *testing.T) {
	for _, tool := range []string{"native", "toolmw"} {
		rows := &mrtrRows{}
		c, a := mrtrClient(t, mrtrServer(t, rows), false)
		_, err := call(t, &wire{client: c}, tool, nil)
		require.NoError(t, err, tool)
		res := a.first(t)
		assert.True(t, res.NeedsInput(), "%s: resultType input_required", tool)
		assert.Equal(t, "s1", res.RequestState, tool)
		require.Contains(t, res.InputRequests, "confirm", tool)
		assert.Equal(t, mcp.MethodElicitationCreate, res.InputRequests["confirm"].Method, tool)
		require.NotNil(t, res.InputRequests["confirm"].Elicitation, tool)
		assert.Equal(t, "Sure?", res.InputRequests["confirm"].Elicitation.Message, tool)
		assert.False(t, res.IsError, tool)
		assert.Empty(t, res.Content, tool)
		got := rows.snapshot()
		require.NotEmpty(t, got)
		assert.True(t, got[0].Outcome.InputRequired, tool)
		assert.False(t, got[0].Outcome.Failed, tool)
	}
}

// TestMultiRoundTripEndToEnd: mcp-go's client fulfils the requests and
// retries; for a client of 2026-07-28 each round is a tools/call, and for
// an older one mcp-go's legacy bridge, which runs after the tool
// middleware, elicits through a server-initiated request and runs the whole
// chain again: two rounds, two runs of the chain, either way.
func TestMultiRoundTripEndToEnd(t *testing.T) {
	for name, legacy := range map[string]bool{"2026-07-28": false, "2025-11-25": true} {
		t.Run(name, func(t *testing.T) {
			for _, tool := range []string{"native", "toolmw"} {
				rows := &mrtrRows{}
				c, a := mrtrClient(t, mrtrServer(t, rows, middleware.Rounds(middleware.RoundsConfig{Key: []byte("0123456789abcdef")})), legacy)
				res, err := call(t, &wire{client: c}, tool, nil)
				require.NoError(t, err, tool)
				require.False(t, res.IsError, "%s: %s", tool, text(res))
				assert.Contains(t, text(res), "accept", "%s: the handler got the answer and the state", tool)
				got := rows.snapshot()
				require.Len(t, got, 2, "%s: one run of the chain per round", tool)
				assert.True(t, got[0].Outcome.InputRequired, tool)
				assert.False(t, got[1].Outcome.InputRequired || got[1].Outcome.Failed, tool)
				assert.Contains(t, got[1].Request.InputResponses, "confirm", tool)
				// Rounds sealed the handler's state and joined the rows.
				assert.True(t, strings.HasPrefix(got[1].Request.RequestState, "tm1s."), "%s: the client echoed the sealed state", tool)
				of, _ := got[1].Result.Note(middleware.NoteRoundOf)
				assert.Equal(t, got[0].Details.CallID(), of, "%s: the second round's row names the first's call id", tool)
				if !legacy {
					assert.True(t, strings.HasPrefix(a.first(t).RequestState, "tm1s."), "%s: the client got the sealed state", tool)
				}
			}
		})
	}
}
