package mcpsdk_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
)

type bearerRT struct{ token string }

func (rt bearerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+rt.token)
	return http.DefaultTransport.RoundTrip(req)
}

// TestIdentityFromTokenInfo: on streamable HTTP behind the SDK's bearer
// auth, the Request has the header and the identity (subject and scopes),
// the After row has the subject, and the token is in neither.
func TestIdentityFromTokenInfo(t *testing.T) {
	const token = "tok-" + canary
	for _, stateless := range []bool{false, true} {
		rec := &recorder{}
		s := buildServer(rec, toolctx.TransportUnknown)
		verify := func(ctx context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
			if tok != token {
				return nil, auth.ErrInvalidToken
			}
			return &auth.TokenInfo{UserID: "bob", Scopes: []string{"invoices:read"}, Expiration: time.Now().Add(time.Hour)}, nil
		}
		h := auth.RequireBearerToken(verify, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
		srv := httptest.NewServer(h)
		cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil)
		require.NoError(t, err)

		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}, Meta: mcp.Meta{"case": 1}})
		require.NoError(t, err)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(text(res)), &got))
		require.Equal(t, "bob", got["subject"])
		require.Equal(t, true, got["has_header"])
		require.Equal(t, string(toolctx.TransportStreamableHTTP), got["transport"])
		recs := rec.snapshot()
		require.Len(t, forCase(recs, "after", 1), 1)
		a := forCase(recs, "after", 1)[0]
		require.Equal(t, "bob", a.Subject)
		require.NotContains(t, jsonOf(t, recs), canary)
		_ = cs.Close()
		srv.Close()
	}
}
