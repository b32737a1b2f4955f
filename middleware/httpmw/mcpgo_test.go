package httpmw_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/justinas/alice"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// TestHTTPStackWithMCPGo puts the HTTP constructors, composed with alice, in
// front of mcp-go's streamable HTTP server running the toolmw adapter, and
// checks that the identity and request id reach the tool Request and the
// After record, and that auth failures follow the behaviour table.
func TestHTTPStackWithMCPGo(t *testing.T) {
	var (
		mu   sync.Mutex
		reqs []toolctx.Request
		rows []middleware.CallInfo
	)
	d := &diagSink{}
	chain := middleware.New(
		middleware.After(func(_ context.Context, info middleware.CallInfo) {
			mu.Lock()
			rows = append(rows, info)
			mu.Unlock()
		}),
		middleware.Diagnostics(d.fn),
		middleware.Normalize(errs0),
		middleware.Recover,
	)
	s := server.NewMCPServer("http-test", "1.0.0", mcpgo.ServerOption(chain.Middleware()))
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("whoami"), toolctx.HandlerFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			mu.Lock()
			reqs = append(reqs, *req)
			mu.Unlock()
			return toolctx.TextResult("hi " + req.Identity.Subject)
		})))

	idpDown := errors.New("CANARY idp: dial tcp 10.1.2.3:443: i/o timeout")
	verify := func(r *http.Request) (toolctx.Identity, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer s3cret-token":
			return toolctx.Identity{Subject: "alice", Scopes: []string{"tools:call"}}, nil
		case "Bearer idp-down":
			return toolctx.Identity{}, idpDown
		}
		return toolctx.Identity{}, httpmw.ErrNoCredentials
	}
	stack := alice.New(
		httpmw.Recover(httpmw.WithDiagnostics(d.fn)),
		httpmw.RequestID,
		httpmw.Authenticate(verify, httpmw.WithDiagnostics(d.fn)),
		httpmw.MaxBodyBytes(1<<20),
	).Then(server.NewStreamableHTTPServer(s))
	ts := httptest.NewServer(stack)
	defer ts.Close()

	connect := func(auth string) (*client.Client, error) {
		c, err := client.NewStreamableHttpClient(ts.URL+"/mcp",
			transport.WithHTTPHeaders(map[string]string{"Authorization": auth, httpmw.RequestIDHeader: "req-42"}))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, c.Start(ctx))
		_, err = c.Initialize(ctx, mcp.InitializeRequest{})
		return c, err
	}

	c, err := connect("Bearer s3cret-token")
	require.NoError(t, err)
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = "whoami"
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "hi alice", res.Content[0].(mcp.TextContent).Text)

	mu.Lock()
	require.Len(t, reqs, 1)
	got := reqs[0]
	require.Len(t, rows, 1)
	row := rows[0]
	mu.Unlock()
	require.NotNil(t, got.Identity)
	assert.Equal(t, toolctx.Identity{Subject: "alice", Scopes: []string{"tools:call"}}, *got.Identity)
	assert.Equal(t, "req-42", got.RequestID)
	assert.Equal(t, toolctx.TransportStreamableHTTP, got.Transport)
	assert.Equal(t, "alice", row.Details.Subject())
	assert.Equal(t, "req-42", row.Details.RequestID())
	assert.NotContains(t, row.Details.LogValue().String(), "s3cret-token")
	assert.Empty(t, d.events())

	_, err = connect("")
	require.Error(t, err, "no credentials: 401")
	assert.Empty(t, d.events(), "an expected rejection is not a diagnostic")

	_, err = connect("Bearer idp-down")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "CANARY")
	assert.NotContains(t, err.Error(), "10.1.2.3")
	evs := d.events()
	// mcp-go's client tries protocol 2026-07-28 first and falls back to the
	// initialize handshake: one event per HTTP request.
	require.NotEmpty(t, evs)
	for _, ev := range evs {
		assert.Same(t, idpDown, ev.Cause())
		assert.True(t, ev.Details.IsZero())
	}

	// A body over the limit never reaches the transport.
	small := alice.New(httpmw.MaxBodyBytes(64)).Then(server.NewStreamableHTTPServer(s))
	ts2 := httptest.NewServer(small)
	defer ts2.Close()
	r, err := http.Post(ts2.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"pad":"`+strings.Repeat("x", 200)+`"}}}`))
	require.NoError(t, err)
	_ = r.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.StatusCode)
}
