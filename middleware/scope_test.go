package middleware_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

var deployPolicy = middleware.ScopePolicy{Tools: map[string][]string{
	"deploy":  {"deploy:prod", "deploy:audit"},
	"destroy": {"infra:destroy"},
}}

// The behaviour-table row "a guard before the handler rejects", for
// RequireScopes, through both adapters: the rejection names the missing
// scope, never the caller's other scopes; a row with its code; no
// diagnostics.
func TestRequireScopesThroughAdapters(t *testing.T) {
	tools := map[string]toolctx.Handler{"deploy": textTool("deployed"), "destroy": textTool("destroyed"), "status": textTool("green")}
	forEachSDK(t, tools, []toolctx.Middleware{middleware.RequireScopes(deployPolicy)}, func(t *testing.T, call caller, side *serverSide) {
		ctx := context.Background()
		other := []string{"CANARY-scope-billing:admin", "deploy:audit"}

		got := call(t, ctx, callOpts{Tool: "deploy", Subject: "alice", Scopes: []string{"deploy:prod", "deploy:audit"}})
		assert.Equal(t, "deployed", got.Text, "every scope held: admitted")

		got = call(t, ctx, callOpts{Tool: "deploy", Subject: "bob", Scopes: other})
		require.True(t, got.IsError, "a scope missing: %s", got.JSON)
		assert.Equal(t, errs.CodePermissionDenied, got.Code, "permission_denied")
		assert.Equal(t, `calling "deploy" needs the scope "deploy:prod"`, got.Text, "naming the missing scope")
		assert.Equal(t, map[string]any{"missing_scopes": []any{"deploy:prod"}}, got.Detail, "and only it")
		assert.NotContains(t, got.JSON, "CANARY", "never the caller's other scopes")
		assert.NotContains(t, got.JSON, "bob", "nor the subject")

		got = call(t, ctx, callOpts{Tool: "destroy"})
		assert.Equal(t, errs.CodeUnauthenticated, got.Code, "no identity: unauthenticated")

		assert.Equal(t, "green", call(t, ctx, callOpts{Tool: "status"}).Text, "an unlisted tool needs nothing (Default is nil)")

		rows, diags := side.take()
		require.Len(t, rows, 4, "one row per call")
		assert.Equal(t, errs.CodePermissionDenied, rows[1].Code, "the denial's row has its code")
		assert.Equal(t, audit.OutcomeRejected, rows[1].Outcome, "a rejection")
		assert.NotContains(t, rows[1].Message, "CANARY", "the row names the missing scope only")
		assert.Equal(t, errs.CodeUnauthenticated, rows[2].Code, "so has the unauthenticated one")
		assert.Empty(t, diags, "no diagnostics")
	})
}

func TestRequireScopesDefaultAndConstruction(t *testing.T) {
	h := thenG(t, middleware.New(middleware.Normalize(errs.Normalizer{}),
		middleware.RequireScopes(middleware.ScopePolicy{Default: []string{"mcp:tools"}, Tools: map[string][]string{"open": nil}})),
		textTool("ok"))
	req := reqG("unlisted")
	req.Identity = &toolctx.Identity{Subject: "s", Scopes: []string{"x", "y"}}
	res := h.CallTool(context.Background(), req)
	assert.Equal(t, `calling "unlisted" needs the scope "mcp:tools"`, res.Error.Message, "Default applies to unlisted tools")
	assert.False(t, h.CallTool(context.Background(), reqG("open")).IsError, "a tool listed with no scopes is open")

	two := thenG(t, middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.RequireScopes(deployPolicy)), textTool("ok"))
	req = reqG("deploy")
	req.Identity = &toolctx.Identity{Subject: "s"}
	assert.Equal(t, `calling "deploy" needs the scopes "deploy:prod", "deploy:audit"`, two.CallTool(context.Background(), req).Error.Message, "every missing scope is named")

	assert.Panics(t, func() { middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"": {"a"}}}) }, "an empty tool name")
	assert.Panics(t, func() { middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"t": {" "}}}) }, "an empty scope")
	assert.Panics(t, func() { middleware.RequireScopes(middleware.ScopePolicy{Default: []string{""}}) }, "an empty default scope")
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// The composition the RequireScopes doc describes, on the go-sdk over
// streamable HTTP: auth.RequireBearerToken verifies the token and enforces
// the server-wide scope, with its RFC 9728 challenge; the adapter turns the
// TokenInfo into Request.Identity; RequireScopes enforces the per-tool
// scope. The token never reaches the client or the row.
func TestRequireScopesWithRequireBearerToken(t *testing.T) {
	const token = "CANARY-token-eyJhbGciOi"
	side := &serverSide{}
	s := mcp.NewServer(&mcp.Implementation{Name: "scoped"}, nil)
	for _, name := range []string{"deploy", "status"} {
		require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, textTool(name+" ok")), "register")
	}
	mcpsdk.Install(s, side.guardChain(middleware.RequireScopes(deployPolicy)).Middleware())

	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if tok != token {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "carol", Scopes: []string{"mcp:tools", "deploy:audit", "CANARY-scope-other"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: "/.well-known/oauth-protected-resource",
		Scopes:              []string{"mcp:tools"},
	})(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	mux.Handle("/.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:        "http://127.0.0.1/mcp",
		ScopesSupported: []string{"mcp:tools", "deploy:prod", "deploy:audit", "infra:destroy"},
	}))
	ts := httptest.NewServer(mux)
	defer ts.Close()

	// No token: the SDK's 401, with the challenge pointing to the metadata.
	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err, "post")
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no token: 401")
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `resource_metadata="/.well-known/oauth-protected-resource"`, "RFC 9728 challenge")
	resp, err = http.Get(ts.URL + "/.well-known/oauth-protected-resource")
	require.NoError(t, err, "metadata")
	meta, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Contains(t, string(meta), "deploy:prod", "the metadata lists the per-tool scopes")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	require.NoError(t, err, "connect with the token")
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "status", Arguments: map[string]any{}})
	require.NoError(t, err, "status")
	assert.False(t, res.IsError, "the server-wide scope is enough for status")

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{}})
	require.NoError(t, err, "deploy")
	b, _ := json.Marshal(res)
	require.True(t, res.IsError, "deploy needs deploy:prod: %s", b)
	assert.Contains(t, string(b), `needs the scope \"deploy:prod\"`, "the missing scope is named")
	assert.NotContains(t, string(b), "CANARY", "neither the token nor the caller's other scopes")

	rows, diags := side.take()
	require.Len(t, rows, 2, "one row per call")
	assert.Equal(t, "carol", rows[1].Subject, "the row names the subject from the token's info")
	assert.Equal(t, errs.CodePermissionDenied, rows[1].Code, "and the denial's code")
	assert.NotContains(t, rows[1].Message, "CANARY", "never the token")
	assert.Empty(t, diags, "no diagnostics")
}
