package mcpsdk_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// scopesRT sends the scopes in *scopes as X-Scopes on every request.
type scopesRT struct{ scopes *atomic.Value }

func (rt scopesRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer opaque")
	req.Header.Set("X-Scopes", rt.scopes.Load().(string))
	return http.DefaultTransport.RoundTrip(req)
}

// TestIdentityFromIsNeverStale: on one streamable HTTP session, two calls
// carried by requests with different identities (one subject, as the SDK
// binds a session to its user, different scopes) each see their own
// identity through toolctx.IdentityFrom in the chain and the tool, the one
// Request.Identity holds, never that of the request that created the
// session; a request without an identity sees none.
func TestIdentityFromIsNeverStale(t *testing.T) {
	httpAuth := func(next http.Handler) http.Handler { // stands for httpmw.Authenticate
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if sc := r.Header.Get("X-Scopes"); sc != "none" {
				ctx = toolctx.WithIdentity(ctx, toolctx.Identity{Subject: "alice", Scopes: strings.Split(sc, ",")})
				ctx = toolctx.WithRequestID(ctx, "rid-"+sc)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	describe := func(id *toolctx.Identity) string {
		if id == nil {
			return "<none>"
		}
		return id.Subject + ":" + strings.Join(id.Scopes, ",")
	}
	for _, stateless := range []bool{false, true} {
		var mu sync.Mutex
		var seen []string
		note := func(where string, ctx context.Context, req *toolctx.Request) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, where+" ctx="+describe(toolctx.IdentityFrom(ctx))+" req="+describe(req.Identity)+
				" rid="+toolctx.RequestIDFrom(ctx)+"/"+req.RequestID)
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "identity"}, nil)
		must(mcpsdk.AddTool(s, &mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
			toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
				note("tool", ctx, req)
				return toolctx.TextResult("ok")
			})))
		mcpsdk.Install(s, func(next toolctx.Handler) toolctx.Handler {
			return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
				note("chain", ctx, req)
				return next.CallTool(ctx, req)
			})
		})
		srv := httptest.NewServer(httpAuth(mcpsdk.ForwardIdentity(mcp.NewStreamableHTTPHandler(
			func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))))
		var scopes atomic.Value
		scopes.Store("admin") // the request that creates the session
		cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL,
			HTTPClient: &http.Client{Transport: scopesRT{&scopes}}}, nil)
		require.NoError(t, err, "connect")

		var want []string
		for _, sc := range []string{"read", "write", "none"} {
			if sc == "none" && !stateless {
				// The SDK refuses a request without the session's user on a
				// stateful session: it would never reach the chain.
				continue
			}
			scopes.Store(sc)
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
			require.NoError(t, err, "call with scopes %s", sc)
			id, rid := "alice:"+sc, "rid-"+sc
			if sc == "none" {
				id, rid = "<none>", ""
			}
			for _, where := range []string{"chain", "tool"} {
				want = append(want, where+" ctx="+id+" req="+id+" rid="+rid+"/"+rid)
			}
		}
		mu.Lock()
		require.Equal(t, want, seen, "stateless=%v: each call sees its own request's identity, never the session creator's", stateless)
		mu.Unlock()
		scopes.Store("admin") // the session's user closes it
		_ = cs.Close()
		srv.Close()
	}
}
