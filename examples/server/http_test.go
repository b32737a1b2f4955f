package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostOf is the host:port of an http URL.
func hostOf(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	require.NoError(t, err)
	return pu.Host
}

// A client that sends its body one byte every 2 s is cut off by
// -read-timeout: the server closes the connection long before the body is in.
func TestSlowBodyIsCutOff(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-read-timeout", "2s")
	addr := hostOf(t, serverURL(t, p))

	const clients, bodyLen = 5, 20 // 20 bytes at one per 2 s: 40 s for a whole body
	type result struct {
		sent    int64
		elapsed time.Duration
		err     error
	}
	results := make(chan result, clients)
	for range clients {
		go func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer conn.Close()
			start := time.Now()
			_, err = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\n"+
				"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
				"Content-Length: 20\r\n\r\n")
			if err != nil {
				results <- result{err: err}
				return
			}
			var sent atomic.Int64
			stop := make(chan struct{})
			trickled := make(chan struct{})
			go func() {
				defer close(trickled)
				tick := time.NewTicker(2 * time.Second)
				defer tick.Stop()
				for range bodyLen {
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
					sent.Add(1)
					select {
					case <-tick.C:
					case <-stop:
						return
					}
				}
			}()
			// Read until the server closes: a 4xx answer then EOF, or a reset.
			_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			_, err = io.Copy(io.Discard, conn)
			elapsed := time.Since(start)
			close(stop)
			<-trickled
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				results <- result{sent: sent.Load(), elapsed: elapsed, err: errors.New("the server never closed the connection")}
				return
			}
			results <- result{sent: sent.Load(), elapsed: elapsed}
		}()
	}
	for range clients {
		r := <-results
		require.NoError(t, r.err)
		assert.Less(t, r.sent, int64(bodyLen), "the connection was closed before the body was in (after %v)", r.elapsed)
		assert.Less(t, r.elapsed, 20*time.Second, "closed by the 2 s read timeout, not by the body's end")
	}
}

// An idle keep-alive connection is closed after -idle-timeout.
func TestIdleConnectionIsClosed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-idle-timeout", "1s")
	addr := hostOf(t, serverURL(t, p))

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.False(t, resp.Close, "the connection is kept alive after the answer")

	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the idle connection")
	assert.Less(t, time.Since(start), 20*time.Second, "closed by the 1 s idle timeout")
}

// End to end, the timeouts cut neither a call longer than -read-timeout
// nor the session's standalone SSE stream, which outlives both (the client,
// with no retries, fails its connection if the stream ends).
func TestTimeoutsSpareLongCalls(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db,
		"-read-timeout", "1s", "-write-timeout", "3s", "-slow-timeout", "2500ms")
	u := serverURL(t, p)
	var gets atomic.Int64
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: u, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: countGETs{&gets}}}, nil)
	require.NoError(t, err)
	defer cs.Close()

	start := time.Now()
	for _, seconds := range []float64{2, 2} {
		res, err := call(t, cs, "slow", map[string]any{"seconds": seconds})
		require.NoError(t, err, "a %vs call outlives the 1s read timeout; stderr:\n%s", seconds, p.stderr)
		assert.False(t, res.IsError, "%s", text(res))
	}
	assert.Greater(t, time.Since(start), 3*time.Second, "the session outlived the write timeout")
	res, err := call(t, cs, "greet", map[string]any{"name": "still here"})
	require.NoError(t, err, "the standalone stream was not cut by the timeouts")
	assert.False(t, res.IsError)
	assert.Equal(t, int64(1), gets.Load(), "one standalone stream, never reconnected")
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	assert.Equal(t, 0, p.wait(t))
}

// countGETs counts the client's GET requests (its standalone SSE streams).
type countGETs struct{ n *atomic.Int64 }

func (c countGETs) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		c.n.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A POST whose body arrives late (within -read-timeout) still has the whole
// -write-timeout for its call and answer: the slow call, within its own
// deadline, is answered although headers-to-answer exceeds -write-timeout.
func TestSlowCallAfterSlowBody(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-stateless",
		"-read-timeout", "10s", "-write-timeout", "2500ms", "-slow-timeout", "2s")
	addr := hostOf(t, serverURL(t, p))

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":1.8}}}`
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", addr, len(body))
	require.NoError(t, err)
	time.Sleep(1500 * time.Millisecond) // the body comes late, within -read-timeout
	_, err = io.WriteString(conn, body)
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the server answered; stderr:\n%s", p.stderr)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the answer was not cut off by the write timeout: %q", got)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", got)
	assert.Contains(t, string(got), `"slept"`, "the slow call's result")
}
