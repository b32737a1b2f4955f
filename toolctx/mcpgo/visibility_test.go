package mcpgo_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

var visPolicy = middleware.ScopePolicy{Tools: map[string][]string{"read": {"read"}, "deploy": {"deploy:prod"}}}

var visCallers = map[string][]string{"alice": {"read"}, "bob": {"read", "deploy:prod"}}

// visServer serves the named tools behind RequireScopes(visPolicy) with the
// policy's visibility, or bare (mcp-go's own answers, no adapter).
func visServer(ran *atomic.Int64, bare bool, tools ...string) *server.MCPServer {
	var opts []server.ServerOption
	if !bare {
		opts = append(opts, mcpgo.ServerOption(middleware.New(middleware.RequireScopes(visPolicy)).Middleware(), mcpgo.WithVisibility(visPolicy.Allows)))
	}
	s := server.NewMCPServer("vis", "0", opts...)
	for _, name := range tools {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran.Add(1)
			return mcp.NewToolResultText("ran " + name), nil
		})
	}
	return s
}

// identTransport gives every request of an in-process client the caller's
// identity, as an HTTP layer would.
type identTransport struct {
	transport.Interface
	id toolctx.Identity
}

func (t identTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return t.Interface.SendRequest(toolctx.WithIdentity(ctx, t.id), req)
}

// visWire connects caller to s over tr ("in-process", "http-stateful",
// "http-stateless").
func visWire(t *testing.T, tr string, s *server.MCPServer, caller string) *wire {
	t.Helper()
	w := &wire{name: tr}
	if tr == "in-process" {
		w.client = client.NewClient(&captureTransport{Interface: identTransport{transport.NewInProcessTransport(s), toolctx.Identity{Subject: caller, Scopes: visCallers[caller]}}, w: w})
	} else {
		identify := func(ctx context.Context, r *http.Request) context.Context {
			name := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			if scopes, ok := visCallers[name]; ok {
				return toolctx.WithIdentity(ctx, toolctx.Identity{Subject: name, Scopes: scopes})
			}
			return ctx
		}
		ts := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(identify), server.WithStateLess(tr == "http-stateless")))
		t.Cleanup(ts.Close)
		hc := &http.Client{Transport: &captureRT{base: http.DefaultTransport, w: w}}
		c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", transport.WithHTTPBasicClient(hc),
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + caller}))
		require.NoError(t, err)
		w.client = c
	}
	initialize(t, w.client)
	t.Cleanup(func() { _ = w.client.Close() })
	return w
}

func visNames(t *testing.T, w *wire) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := w.client.ListTools(ctx, mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// lastAnswer is the last JSON-RPC response the wire received.
func lastAnswer(t *testing.T, b []byte) string {
	t.Helper()
	s := string(b)
	for {
		i := strings.LastIndex(s, `{"jsonrpc"`)
		require.GreaterOrEqual(t, i, 0, "no JSON-RPC response in %q", b)
		line, _, _ := strings.Cut(s[i:], "\n")
		line = strings.TrimSpace(line)
		if strings.Contains(line, `"id":`) && (strings.Contains(line, `"result":`) || strings.Contains(line, `"error":`)) {
			return line
		}
		s = s[:i]
	}
}

// TestVisibilityPerCaller: two callers with different scopes on one
// server each list only the tools they may call (in-process, streamable
// HTTP stateful and stateless, per request); a call to a hidden tool gets,
// byte for byte, mcp-go's answer for a tool the server does not have, and
// the tool does not run.
func TestVisibilityPerCaller(t *testing.T) {
	for _, tr := range []string{"in-process", "http-stateful", "http-stateless"} {
		t.Run(tr, func(t *testing.T) {
			var ran, refRan atomic.Int64
			s := visServer(&ran, false, "public", "read", "deploy")
			alice := visWire(t, tr, s, "alice")
			bob := visWire(t, tr, s, "bob")
			require.Equal(t, []string{"public", "read"}, visNames(t, alice))
			require.Equal(t, []string{"deploy", "public", "read"}, visNames(t, bob))
			require.Equal(t, []string{"public", "read"}, visNames(t, alice), "per request, after bob's list")

			res, err := call(t, bob, "deploy", map[string]any{})
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Equal(t, int64(1), ran.Load())

			_, hiddenErr := call(t, alice, "deploy", map[string]any{})
			require.Error(t, hiddenErr)
			require.Equal(t, int64(1), ran.Load(), "the hidden tool did not run")
			hidden := lastAnswer(t, alice.bodyBytes())
			require.Contains(t, hidden, `"code":-32602`)
			require.Contains(t, hidden, `tool 'deploy' not found`)

			ref := visServer(&refRan, true, "public", "read")
			refAlice := visWire(t, tr, ref, "alice")
			visNames(t, refAlice)
			visNames(t, refAlice)
			_, unknownErr := call(t, refAlice, "deploy", map[string]any{})
			require.Error(t, unknownErr)
			require.Equal(t, lastAnswer(t, refAlice.bodyBytes()), hidden, "a hidden tool answers exactly as an unknown one")
			require.Equal(t, unknownErr.Error(), hiddenErr.Error())
		})
	}
}
