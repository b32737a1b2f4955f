package httpmw_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/justinas/alice"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware/httpmw"
)

// bodyCanary is what a failing body reader's error says: it must not reach
// the client.
const bodyCanary = "CANARY read tcp 10.1.2.3:8080->10.9.8.7:51515: connection reset by peer"

// failingBody is a request body that gives a few bytes, then an error.
type failingBody struct{ sent bool }

func (b *failingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"jsonrpc":"2.0",`), nil
	}
	return 0, errors.New(bodyCanary)
}

func (b *failingBody) Close() error { return nil }

// serveSDK serves go-sdk's streamable HTTP handler behind the middleware
// the demo puts in front of it, on a real server with a read timeout, and
// returns its address. fail, when set, swaps each request's body for a
// failingBody before MaxBodyBytes reads it.
func serveSDK(t *testing.T, stateless, fail bool) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bodyread", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	chain := alice.New(httpmw.Recover(), httpmw.RequestID)
	if fail {
		chain = chain.Append(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Body = &failingBody{}
				next.ServeHTTP(w, r)
			})
		})
	}
	hs := &http.Server{Handler: chain.Append(httpmw.MaxBodyBytes(1 << 20)).Then(h), ReadTimeout: 300 * time.Millisecond}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// partialPost sends a POST that declares 400 bytes and sends 20, then
// either waits (the server's read deadline passes) or closes its side, and
// returns the response.
func partialPost(t *testing.T, addr string, closeWrite bool) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 400\r\n\r\n%s", addr, `{"jsonrpc":"2.0","id"`)
	require.NoError(t, err)
	if closeWrite {
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

// assertNoReadError checks that an answer says nothing of the read error.
func assertNoReadError(t *testing.T, body string) {
	t.Helper()
	for _, raw := range []string{"127.0.0.1", "10.1.2.3", "CANARY", "read tcp", "i/o timeout", "unexpected EOF", "reset by peer", "failed to read body"} {
		assert.NotContains(t, body, raw, "the answer names no part of the read error")
	}
}

// go-sdk's streamable HTTP handler answers a body it could not read with
// the read error's text, socket addresses included ("failed to read body:
// read tcp 127.0.0.1:...->127.0.0.1:...: i/o timeout"). Behind
// MaxBodyBytes the body is read first, and a failed read is answered with
// a fixed message: 408 when the body did not arrive before the server's
// read deadline, 400 when it broke off.
func TestMaxBodyBytesAnswersBodyReadFailures(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			addr := serveSDK(t, stateless, false)

			res, body := partialPost(t, addr, false)
			assert.Equal(t, http.StatusRequestTimeout, res.StatusCode, "%s", body)
			assert.Contains(t, body, "the request body did not arrive in time")
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			assertNoReadError(t, body)

			res, body = partialPost(t, addr, true)
			assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%s", body)
			assert.Contains(t, body, "the request body could not be read")
			assertNoReadError(t, body)

			failing := serveSDK(t, stateless, true)
			req, err := http.NewRequest(http.MethodPost, "http://"+failing+"/mcp", strings.NewReader(`{}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			b, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", b)
			assert.Contains(t, string(b), `"code":-32600`, "a JSON-RPC error object")
			assertNoReadError(t, string(b))
		})
	}
}
