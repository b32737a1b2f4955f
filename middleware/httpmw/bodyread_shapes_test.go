package httpmw_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/justinas/alice"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware/httpmw"
)

// shapeLimit is the body limit the shapes are sent under.
const shapeLimit = 1024

// serveBehind serves h behind Recover, RequestID and MaxBodyBytes(1 KiB) on
// 127.0.0.1, with a read timeout no shape here reaches (none waits for it).
func serveBehind(t *testing.T, h http.Handler) string {
	t.Helper()
	hs := &http.Server{Handler: alice.New(httpmw.Recover(), httpmw.RequestID, httpmw.MaxBodyBytes(shapeLimit)).Then(h), ReadTimeout: time.Minute}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// rawExchange writes head and body on a new connection, closes its write
// side when closeWrite is set, and returns the answer.
func rawExchange(t *testing.T, addr, head, body string, closeWrite bool) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s\r\n%s", addr, head, body)
	require.NoError(t, err)
	if closeWrite {
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

// Body shapes the first test did not send, on both SDKs' streamable HTTP
// handlers (stateful and stateless for go-sdk): chunked garbage, a chunked
// body cut off before its last chunk, a chunked body over the limit, a
// Content-Length over the limit with a short body, a client that resets
// the connection mid-body. Each is answered by MaxBodyBytes with its fixed
// message (or by net/http before any handler), never with a read error's
// text; after each the server still answers.
func TestMaxBodyBytesBodyShapes(t *testing.T) {
	sdk := mcp.NewServer(&mcp.Implementation{Name: "shapes", Version: "1"}, nil)
	handlers := map[string]http.Handler{
		"go-sdk":           mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdk }, nil),
		"go-sdk stateless": mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdk }, &mcp.StreamableHTTPOptions{Stateless: true}),
		"mcp-go":           mcpgoserver.NewStreamableHTTPServer(mcpgoserver.NewMCPServer("shapes", "1")),
	}
	big := strings.Repeat("x", 2*shapeLimit)
	shapes := []struct {
		name, head, body string
		closeWrite       bool
		status           int
		message          string
	}{
		{"chunk size not hex", "Transfer-Encoding: chunked\r\n", "zz\r\nabc\r\n0\r\n\r\n", false, http.StatusBadRequest, "the request body could not be read"},
		{"chunk size overflows", "Transfer-Encoding: chunked\r\n", "ffffffffffffffffffff\r\nabc\r\n", true, http.StatusBadRequest, "the request body could not be read"},
		{"chunk without its CRLF", "Transfer-Encoding: chunked\r\n", "3\r\nabcdef0\r\n\r\n", true, http.StatusBadRequest, "the request body could not be read"},
		{"chunked, cut off", "Transfer-Encoding: chunked\r\n", "5\r\n{\"jso", true, http.StatusBadRequest, "the request body could not be read"},
		{"chunked, over the limit", "Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big), false, http.StatusRequestEntityTooLarge, "the limit is 1024 bytes"},
		{"Content-Length over the limit, short body", "Content-Length: 100000\r\n", `{"jsonrpc":"2.0"`, true, 0, ""},
		{"Content-Length over the limit, whole body", fmt.Sprintf("Content-Length: %d\r\n", len(big)), big, false, http.StatusRequestEntityTooLarge, "the limit is 1024 bytes"},
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			addr := serveBehind(t, h)
			for _, s := range shapes {
				res, body := rawExchange(t, addr, s.head, s.body, s.closeWrite)
				if s.status != 0 {
					assert.Equal(t, s.status, res.StatusCode, "%s: %s", s.name, body)
					assert.Contains(t, body, s.message, s.name)
					assert.Contains(t, body, `"jsonrpc":"2.0"`, "%s: a JSON-RPC error", s.name)
				} else {
					assert.Contains(t, []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge}, res.StatusCode, "%s: %s", s.name, body)
				}
				assertNoReadError(t, body)
				for _, raw := range []string{"chunk", "malformed", "EOF", "http:", "net/http", "*http."} {
					assert.NotContains(t, body, raw, "%s: no part of the read error", s.name)
				}
			}

			// A client that resets the connection mid-body: nothing to
			// answer, and the server goes on.
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":", addr)
			require.NoError(t, err)
			require.NoError(t, conn.(*net.TCPConn).SetLinger(0))
			require.NoError(t, conn.Close()) // RST

			res, body := rawExchange(t, addr, "Content-Length: 2\r\n", "{}", false)
			assert.NotEqual(t, 0, res.StatusCode, "the server still answers after a reset")
			assertNoReadError(t, body)
		})
	}
}
