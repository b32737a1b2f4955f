package mcpsdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
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

type headerRT struct {
	n *atomic.Int64
}

func (rt headerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer opaque")
	req.Header.Set("X-Request-Id", fmt.Sprintf("rid-%d", rt.n.Add(1)))
	return http.DefaultTransport.RoundTrip(req)
}

// TestForwardIdentity: an HTTP layer's context identity and request id reach
// each call, per request, on stateful and stateless sessions.
func TestForwardIdentity(t *testing.T) {
	// Stands for toolmw's HTTP request-id and auth layers.
	httpLayer := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := toolctx.WithRequestID(r.Context(), r.Header.Get("X-Request-Id"))
			ctx = toolctx.WithIdentity(ctx, toolctx.Identity{Subject: "alice", Scopes: []string{"read"}})
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	for _, stateless := range []bool{false, true} {
		rec := &recorder{}
		s := buildServer(rec, toolctx.TransportUnknown)
		var seen []string
		var mu sync.Mutex
		must(mcpsdk.AddTool(s, &mcp.Tool{Name: "rid", InputSchema: json.RawMessage(`{"type":"object"}`)},
			toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
				sub := "<none>"
				if req.Identity != nil {
					sub = req.Identity.Subject
				}
				mu.Lock()
				seen = append(seen, req.RequestID+"/"+sub)
				mu.Unlock()
				return toolctx.TextResult("ok")
			})))
		h := httpLayer(mcpsdk.ForwardIdentity(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})))
		srv := httptest.NewServer(h)
		var n atomic.Int64
		cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: headerRT{&n}}}, nil)
		require.NoError(t, err)
		for range 2 {
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "rid", Arguments: map[string]any{}})
			require.NoError(t, err)
		}
		require.Len(t, seen, 2)
		require.NotEqual(t, seen[0], seen[1], "stateless=%v: %v", stateless, seen)
		for _, v := range seen {
			require.Regexp(t, `^rid-\d+/alice$`, v)
		}
		_ = cs.Close()
		srv.Close()
	}
}
