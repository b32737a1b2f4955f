package mcpsdk_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// visPolicy: "public" needs nothing, "read" needs "read", "deploy" needs
// "deploy:prod".
var visPolicy = middleware.ScopePolicy{Tools: map[string][]string{"read": {"read"}, "deploy": {"deploy:prod"}}}

// visCallers: alice may read, bob may read and deploy.
var visCallers = map[string][]string{"alice": {"read"}, "bob": {"read", "deploy:prod"}}

// visServer serves the named tools behind RequireScopes(visPolicy), with
// the policy's visibility, or with no adapter at all (the SDK's own answers)
// when bare is set; ran counts the tools' runs.
func visServer(ran *atomic.Int64, bare bool, tools ...string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "vis", Version: "0"}, nil)
	for _, name := range tools {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil
		})
	}
	if !bare {
		mcpsdk.Install(s, middleware.New(middleware.RequireScopes(visPolicy)).Middleware(), mcpsdk.WithVisibility(visPolicy.Allows))
	}
	return s
}

// authRT sends the caller's name as its bearer token and records every
// response body byte.
type authRT struct {
	caller string
	c      *capture
}

func (rt authRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+rt.caller)
	return captureRT{base: http.DefaultTransport, c: rt.c}.RoundTrip(req)
}

// visDial connects caller to s over the transport named tr ("in-memory",
// "http-stateful", "http-stateless"); what the client receives is in the
// capture.
func visDial(t *testing.T, tr string, s *mcp.Server, caller string) (*mcp.ClientSession, *capture) {
	t.Helper()
	c := &capture{}
	ctx := context.Background()
	if tr == "in-memory" {
		st, ct := mcp.NewInMemoryTransports()
		sctx := toolctx.WithIdentity(ctx, toolctx.Identity{Subject: caller, Scopes: visCallers[caller]})
		ss, err := s.Connect(sctx, st, nil)
		require.NoError(t, err)
		cs, err := newClient().Connect(ctx, &mcp.LoggingTransport{Transport: ct, Writer: c}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
		return cs, c
	}
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		scopes, ok := visCallers[tok]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: tok, Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
	}
	h := auth.RequireBearerToken(verify, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: tr == "http-stateless"}))
	srv := httptest.NewServer(h)
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: authRT{caller, c}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); srv.Close() })
	return cs, c
}

// lastAnswer is the last JSON-RPC response in what a client received: a
// line holding an object with an "id" and a "result" or an "error", with
// any SSE "data: " prefix or logging prefix cut.
func lastAnswer(t *testing.T, b []byte) []byte {
	t.Helper()
	lines := bytes.Split(b, []byte("\n"))
	for _, l := range slices.Backward(lines) {
		i := bytes.Index(l, []byte(`{"jsonrpc"`))
		if i < 0 || !bytes.Contains(l, []byte(`"id":`)) || !(bytes.Contains(l, []byte(`"result":`)) || bytes.Contains(l, []byte(`"error":`))) {
			continue
		}
		return bytes.TrimSpace(l[i:])
	}
	t.Fatalf("no JSON-RPC response in %q", b)
	return nil
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// TestVisibilityPerCaller: two callers with different scopes on one server
// each list only the tools they may call, on every transport that tells
// one caller from another (in-memory through the context, streamable HTTP
// stateful and stateless through the bearer token, per request); a call
// to a hidden tool gets, byte for byte, the answer the SDK gives for a
// tool the server does not have, and the tool does not run.
func TestVisibilityPerCaller(t *testing.T) {
	for _, tr := range []string{"in-memory", "http-stateful", "http-stateless"} {
		t.Run(tr, func(t *testing.T) {
			var ran, refRan atomic.Int64
			s := visServer(&ran, false, "public", "read", "deploy")
			alice, aliceWire := visDial(t, tr, s, "alice")
			bob, _ := visDial(t, tr, s, "bob")
			require.Equal(t, []string{"public", "read"}, toolNames(t, alice))
			require.Equal(t, []string{"deploy", "public", "read"}, toolNames(t, bob))
			// The lists are per request: alice's again after bob's.
			require.Equal(t, []string{"public", "read"}, toolNames(t, alice))

			res, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Equal(t, int64(1), ran.Load())

			_, hiddenErr := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}})
			var we *jsonrpc.Error
			require.True(t, errors.As(hiddenErr, &we), "a hidden tool is a protocol error: %v", hiddenErr)
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), we.Code)
			require.Equal(t, `unknown tool "deploy"`, we.Message)
			require.Equal(t, int64(1), ran.Load(), "the hidden tool did not run")
			hidden := lastAnswer(t, aliceWire.bytes())
			require.Contains(t, string(hidden), `"error":{"code":-32602,"message":"unknown tool \"deploy\""}`)

			// The same requests, to a bare SDK server that has no "deploy".
			ref := visServer(&refRan, true, "public", "read")
			refAlice, refWire := visDial(t, tr, ref, "alice")
			toolNames(t, refAlice)
			toolNames(t, refAlice)
			_, unknownErr := refAlice.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}})
			require.Error(t, unknownErr)
			require.Equal(t, string(lastAnswer(t, refWire.bytes())), string(hidden), "a hidden tool answers exactly as an unknown one")
			require.Equal(t, unknownErr.Error(), hiddenErr.Error())
		})
	}
}
