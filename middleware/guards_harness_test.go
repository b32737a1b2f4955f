package middleware_test

// The harness of the guards' tests: the recommended chain (audit, Diagnostics,
// Normalize, Recover) around the guards under test, served by a real
// adapter, and called with that SDK's own client. What the client received
// is kept as the JSON it decoded, so the canary checks see every byte of
// it; the server side keeps audit rows and diagnostics events.

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// serverSide is what the server kept of the calls.
type serverSide struct {
	mu    sync.Mutex
	rows  []audit.Record
	diags []middleware.DiagnosticEvent
}

func (s *serverSide) emit(_ context.Context, r audit.Record) {
	s.mu.Lock()
	s.rows = append(s.rows, r)
	s.mu.Unlock()
}

func (s *serverSide) diag(_ context.Context, ev middleware.DiagnosticEvent) {
	s.mu.Lock()
	s.diags = append(s.diags, ev)
	s.mu.Unlock()
}

// take returns and forgets what was kept so far.
func (s *serverSide) take() ([]audit.Record, []middleware.DiagnosticEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, diags := s.rows, s.diags
	s.rows, s.diags = nil, nil
	return rows, diags
}

// Test identities travel in the call's _meta under these keys, and
// asIdentity turns them into Request.Identity as an authentication layer
// would (in memory there is no HTTP layer to do it).
const (
	metaSubject = "test/subject"
	metaScopes  = "test/scopes"
)

func asIdentity(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		sub, _ := req.Meta[metaSubject].(string)
		if sub == "" {
			return next.CallTool(ctx, req)
		}
		id := &toolctx.Identity{Subject: sub}
		if scopes, ok := req.Meta[metaScopes].([]any); ok {
			for _, s := range scopes {
				str, _ := s.(string)
				id.Scopes = append(id.Scopes, str)
			}
		}
		c := *req
		c.Identity = id
		return next.CallTool(ctx, &c)
	})
}

// guardChain is the recommended chain with guards inside Recover.
func (s *serverSide) guardChain(guards ...toolctx.Middleware) middleware.Chain {
	return middleware.New(
		audit.Interceptor(audit.EmitterFunc(s.emit)),
		middleware.Diagnostics(s.diag),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		asIdentity,
	).Append(guards...)
}

// wireResult is what a client received for one call.
type wireResult struct {
	// JSON is the client's result re-encoded: every public field.
	JSON     string
	IsError  bool
	Text     string // the first text content
	Code     errs.Code
	Detail   map[string]any
	Protocol error // a protocol error instead of a result
}

// callOpts is one call.
type callOpts struct {
	Tool    string
	Args    map[string]any
	Subject string
	Scopes  []string
}

// caller calls a tool through a connected client.
type caller func(t *testing.T, ctx context.Context, c callOpts) wireResult

// sdkCase is one adapter: it serves tools (name -> handler, each with an
// open object schema) behind chain and returns a caller.
type sdkCase struct {
	name  string
	serve func(t *testing.T, chain middleware.Chain, tools map[string]toolctx.Handler) caller
}

var sdkCases = []sdkCase{
	{"go-sdk in-memory", serveGoSDK},
	{"mcp-go in-process", serveMCPGo},
}

func (c callOpts) meta() map[string]any {
	if c.Subject == "" {
		return nil
	}
	scopes := make([]any, len(c.Scopes))
	for i, s := range c.Scopes {
		scopes[i] = s
	}
	return map[string]any{metaSubject: c.Subject, metaScopes: scopes}
}

func serveGoSDK(t *testing.T, chain middleware.Chain, tools map[string]toolctx.Handler) caller {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "guards"}, nil)
	for name, h := range tools {
		require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h), "register %s", name)
	}
	mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportInMemory))
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	require.NoError(t, err, "server connect")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "guards-client"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err, "client connect")
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return func(t *testing.T, ctx context.Context, c callOpts) wireResult {
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: args, Meta: c.meta()})
		if err != nil {
			return wireResult{Protocol: err, JSON: err.Error()}
		}
		b, err := json.Marshal(res)
		require.NoError(t, err, "re-encode the client's result")
		return decodeWire(t, b)
	}
}

func serveMCPGo(t *testing.T, chain middleware.Chain, tools map[string]toolctx.Handler) caller {
	t.Helper()
	s := mcpgoserver.NewMCPServer("guards", "1.0.0", mcpgo.ServerOption(chain.Middleware()))
	for name, h := range tools {
		require.NoError(t, mcpgo.AddTool(s, mcpgomcp.NewTool(name), h), "register %s", name)
	}
	c, err := mcpgoclient.NewInProcessClient(s)
	require.NoError(t, err, "in-process client")
	require.NoError(t, c.Start(context.Background()), "start")
	_, err = c.Initialize(context.Background(), mcpgomcp.InitializeRequest{})
	require.NoError(t, err, "initialize")
	t.Cleanup(func() { _ = c.Close() })
	return func(t *testing.T, ctx context.Context, co callOpts) wireResult {
		req := mcpgomcp.CallToolRequest{}
		req.Params.Name = co.Tool
		req.Params.Arguments = co.Args
		if m := co.meta(); m != nil {
			req.Params.Meta = &mcpgomcp.Meta{AdditionalFields: m}
		}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return wireResult{Protocol: err, JSON: err.Error()}
		}
		b, err := json.Marshal(res)
		require.NoError(t, err, "re-encode the client's result")
		return decodeWire(t, b)
	}
}

// decodeWire reads the MCP JSON of a CallToolResult, the same for both SDKs.
func decodeWire(t *testing.T, b []byte) wireResult {
	var v struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(b, &v), "decode the client's result")
	w := wireResult{JSON: string(b), IsError: v.IsError}
	for _, c := range v.Content {
		if c.Type == "text" {
			w.Text = c.Text
			break
		}
	}
	if raw, ok := v.Meta[toolctx.ErrorMetaKey]; ok {
		var e struct {
			Code   errs.Code      `json:"code"`
			Detail map[string]any `json:"detail"`
		}
		require.NoError(t, json.Unmarshal(raw, &e), "decode the error meta")
		w.Code, w.Detail = e.Code, e.Detail
	}
	return w
}

// forEachSDK runs fn once per adapter, with a fresh server side.
func forEachSDK(t *testing.T, tools map[string]toolctx.Handler, guards []toolctx.Middleware, fn func(t *testing.T, call caller, side *serverSide)) {
	for _, sc := range sdkCases {
		t.Run(sc.name, func(t *testing.T) {
			side := &serverSide{}
			call := sc.serve(t, side.guardChain(guards...), tools)
			fn(t, call, side)
		})
	}
}

// textTool returns a handler whose result is text.
func textTool(text string) toolctx.Handler {
	return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult(text)
	})
}

// thenG builds the handler of a chain, failing the test on a construction
// error. (The guards' tests keep their own helpers: the others' test files
// are being changed as they are written.)
func thenG(t testing.TB, c middleware.Chain, h toolctx.Handler) toolctx.Handler {
	t.Helper()
	out, err := c.Then(h)
	require.NoError(t, err, "build the chain")
	return out
}

// reqG is a request for tool with a call id, as adapters make them.
func reqG(tool string) *toolctx.Request {
	return &toolctx.Request{Tool: tool, CallID: adapter.NewCallID(), Transport: toolctx.TransportInMemory}
}

// returning is a handler that returns res.
func returning(res *toolctx.CallResult) toolctx.Handler {
	return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return res })
}

// forEachSDKNew is forEachSDK with guards built afresh for each adapter,
// for guards that keep state across calls (a cache).
func forEachSDKNew(t *testing.T, tools map[string]toolctx.Handler, guards func() []toolctx.Middleware, fn func(t *testing.T, call caller, side *serverSide)) {
	for _, sc := range sdkCases {
		t.Run(sc.name, func(t *testing.T) {
			side := &serverSide{}
			call := sc.serve(t, side.guardChain(guards()...), tools)
			fn(t, call, side)
		})
	}
}
