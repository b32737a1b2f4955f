package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// proxyURL matches the proxy's log line that names its endpoint.
var proxyURL = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// startHTTPProxy runs the proxy on streamable HTTP on a free loopback port
// with args; it returns the endpoint's URL once the proxy serves it. The
// cleanup stops the proxy and waits for it.
func startHTTPProxy(t testing.TB, args ...string) (string, *syncbuf.Buffer) {
	t.Helper()
	url, stderr, _ := startStoppableProxy(t, args...)
	return url, stderr
}

// startStoppableProxy is startHTTPProxy, and returns stop too: it stops
// the proxy and waits for it (at most a minute), for a test to read what
// the proxy did as it stopped; the cleanup then does nothing more.
func startStoppableProxy(t testing.TB, args ...string) (string, *syncbuf.Buffer, func()) {
	t.Helper()
	stderr := &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	db := filepath.Join(t.TempDir(), "audit.db")
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-audit-db", db, "-shutdown-timeout", "1s"}, args...), nil, stderr, stderr)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Errorf("the proxy did not stop within a minute:\n%s", stderr)
			}
		})
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if m := proxyURL.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stderr, stop
		}
		select {
		case code := <-done:
			t.Fatalf("the proxy exited with status %d:\n%s", code, stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the proxy did not start serving within a minute:\n%s", stderr)
	return "", nil, nil
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPAuthAndScopes: over streamable HTTP (stateful and stateless) a
// client without a valid token is refused with 401; one with a token
// calls the tools its scopes allow, and a tool whose scope it lacks answers
// the public permission-denied error.
func TestHTTPAuthAndScopes(t *testing.T) {
	t.Setenv("TOOLMW_PROXY_TEST_TOKEN", "s3cret-token-for-alice")
	cfg := leakyConfig(t, `tools:
  env:
    scopes: [admin]
auth:
  tokens:
    - subject: alice
      scopes: [read]
      token_env: TOOLMW_PROXY_TEST_TOKEN
`)
	for _, mode := range []string{"stateful", "stateless"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"-config", cfg}
			if mode == "stateless" {
				args = append(args, "-stateless")
			}
			url, _ := startHTTPProxy(t, append(args, "--", os.Args[0])...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			for tok, want := range map[string]int{"": http.StatusUnauthorized, "wrong": http.StatusUnauthorized, "s3cret-token-for-alice": http.StatusOK} {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, stringsReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := (&http.Client{Transport: bearerTransport{tok}}).Do(req)
				require.NoError(t, err)
				_ = resp.Body.Close()
				if want == http.StatusOK {
					assert.NotEqual(t, http.StatusUnauthorized, resp.StatusCode, "a valid token")
				} else {
					assert.Equal(t, want, resp.StatusCode, "token %q", tok)
				}
			}
			for _, tok := range []string{"", "wrong"} {
				_, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{tok}}, MaxRetries: -1}, nil)
				require.Error(t, err, "token %q", tok)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{"s3cret-token-for-alice"}}}, nil)
			require.NoError(t, err)
			defer cs.Close()
			tools, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			assert.Contains(t, names, "echo")
			assert.NotContains(t, names, "env", "a tool the caller lacks the scope for is not in its tools/list")
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"a": 1}})
			require.NoError(t, err)
			assert.False(t, res.IsError)
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "env"})
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Equal(t, errs.CodePermissionDenied, errorCode(t, res))
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "raw_error"})
			require.NoError(t, err)
			assert.Equal(t, errs.CodeInternal, errorCode(t, res))
			assertClean(t, res)
		})
	}
}

// TestOriginCheck: requests with a foreign Host or Origin are refused
// before the MCP handler; loopback ones and the configured ones pass.
func TestOriginCheck(t *testing.T) {
	ok := http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusNoContent) })
	h := originCheck("127.0.0.1:8081", []string{"mcp.internal:8081"}, []string{"https://app.example"})(ok)
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:8081", "", http.StatusNoContent},
		{"localhost:8081", "http://localhost:3000", http.StatusNoContent},
		{"[::1]:8081", "", http.StatusNoContent},
		{"mcp.internal:8081", "https://app.example", http.StatusNoContent},
		{"evil.example:8081", "", http.StatusForbidden},
		{"127.0.0.1:8081", "https://evil.example", http.StatusForbidden},
		{"127.0.0.1:8081", "null", http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		rw := httptest.NewRecorder()
		h.ServeHTTP(rw, r)
		assert.Equal(t, c.want, rw.Code, "Host %q Origin %q", c.host, c.origin)
	}
}

// TestRefusesOpenAddressWithoutAuth: the proxy listens beyond loopback
// only with authentication configured.
func TestRefusesOpenAddressWithoutAuth(t *testing.T) {
	stderr := &syncbuf.Buffer{}
	code := run(context.Background(), []string{"-addr", "0.0.0.0:0", "--", "true"}, nil, stderr, stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "is not a loopback address: configure auth.tokens")
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// TestURLUpstreams: the proxy in front of an upstream by URL, over
// streamable HTTP and over HTTP+SSE: results pass, raw errors are
// scrubbed, and the row keeps them.
func TestURLUpstreams(t *testing.T) {
	for _, c := range []struct{ role, transport string }{{roleLeakyHTTP, "streamable"}, {roleLeakySSE, "sse"}} {
		t.Run(c.transport, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "proxy.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte("upstream:\n  url: "+startLeakyURL(t, c.role)+"\n  transport: "+c.transport+"\n"), 0o600))
			p := startProxy(t, "-config", cfg)
			t.Cleanup(func() { t.Log(p.stderr) })
			res := p.call(t, "echo", map[string]any{"via": c.transport})
			assert.JSONEq(t, `{"via":"`+c.transport+`"}`, text(res))
			res = p.call(t, "jsonrpc_error", nil)
			assert.Equal(t, errs.CodeInternal, errorCode(t, res))
			assertClean(t, res)
			assert.Contains(t, p.rows(t, "jsonrpc_error", 1)[0].Message, canary)
		})
	}
}

// TestHTTPObservedScopes: with observe: true the scope guard refuses and
// hides nothing (tools/list follows the guard through
// middleware.Visibility), and the row of the call it would have refused
// notes would_reject=require_scopes.
func TestHTTPObservedScopes(t *testing.T) {
	t.Setenv("TOOLMW_PROXY_TEST_TOKEN", "s3cret-token-for-alice")
	cfg := leakyConfig(t, `observe: true
tools:
  env:
    scopes: [admin]
auth:
  tokens:
    - subject: alice
      scopes: [read]
      token_env: TOOLMW_PROXY_TEST_TOKEN
`)
	p := &proxied{db: filepath.Join(t.TempDir(), "audit.db")}
	url, _ := startHTTPProxy(t, "-config", cfg, "-audit-db", p.db, "--", os.Args[0])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{"s3cret-token-for-alice"}}}, nil)
	require.NoError(t, err)
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.Contains(t, names, "env", "an observed guard hides nothing")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "env"})
	require.NoError(t, err)
	assert.False(t, res.IsError, "an observed guard refuses nothing")
	row := p.rows(t, "env", 1)[0]
	assert.Contains(t, row.Notes, toolctx.Note{Key: middleware.NoteWouldReject, Value: "require_scopes"})
}
