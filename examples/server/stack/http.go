package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/internal/httpwrap"
)

// deadlines fits the http.Server's WriteTimeout to MCP's requests.
//
// net/http starts the write deadline when a request's headers have been
// read, so a POST whose body took a while to arrive (within ReadTimeout)
// would have less than WriteTimeout left for its tool call and answer, and a
// call within its own deadline could be cut off. Once a POST's body has been
// read, its write deadline restarts: the server then has writeTimeout to
// answer, which -write-timeout's check keeps longer than the slow tool's
// deadline. (ReadTimeout needs no such care: net/http lifts the read
// deadline once the body is in.)
//
// A GET is a stateful session's standalone SSE stream, which lasts as long
// as the session: the write deadline would fail the first message the server
// sends on it after WriteTimeout, so it is lifted. The stream ends when its
// client goes away (the connection closes) or when the session ends (closed
// by the client, expired by -session-idle-timeout, or at shutdown).
func deadlines(writeTimeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(rw)
			if r.Method == http.MethodGet {
				// An error means the writer cannot set deadlines (it is
				// not a net/http connection's): then none was set either.
				_ = rc.SetWriteDeadline(time.Time{})
			} else if r.Body != nil && r.Body != http.NoBody {
				r.Body = &bodyRead{ReadCloser: r.Body, done: func() {
					_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
				}}
			}
			next.ServeHTTP(rw, r)
		})
	}
}

// bodyRead calls done once, when the body has been read to its end.
type bodyRead struct {
	io.ReadCloser
	done func()
}

func (b *bodyRead) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && b.done != nil {
		b.done()
		b.done = nil
	}
	return n, err
}

// sessionCap refuses to open a stateful session while max are open, so
// that a flood of initialize requests cannot grow the server without bound
// (go-sdk's StreamableHTTPOptions has an idle timeout for sessions, but no
// limit on their number).
type sessionCap struct {
	server *mcp.Server
	max    int
	logger *slog.Logger
	// stateless: the server keeps no session (each POST has a temporary
	// one, closed with the request; 2026-07-28 clients carry none at
	// all), so no request is capped.
	stateless bool

	mu      sync.Mutex
	opening int // requests that may open a session, being served now

	lastWarned atomic.Int64 // unix nanoseconds of the last warning
}

// limit is the HTTP middleware. On a stateful server a POST without an
// Mcp-Session-Id is the only request that opens a session; while the open
// sessions and the requests that may open one reach max, it is answered
// 503 Service Unavailable with Retry-After and a JSON-RPC error that says
// why. Requests of open sessions are never refused, nor is any request of
// a stateless server: none opens a session that outlives it.
func (c *sessionCap) limit(next http.Handler) http.Handler {
	if c.stateless {
		return next
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(rw, r)
			return
		}
		if !c.enter() {
			c.refuse(rw)
			return
		}
		defer c.leave()
		next.ServeHTTP(rw, r)
	})
}

// limitSSE is limit for the HTTP+SSE endpoint, where a GET opens a session
// and lasts as long as it (the POSTs of an open session carry its id in the
// query, never an Mcp-Session-Id header, and are never refused). The GET
// counts as opening until the SDK writes the stream's first event, which it
// does as it connects the session: from then on the session counts itself.
func (c *sessionCap) limitSSE(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(rw, r)
			return
		}
		if !c.enter() {
			c.refuse(rw)
			return
		}
		leave := sync.OnceFunc(c.leave)
		defer leave()
		w, _ := httpwrap.Wrap(rw, func(code int) int { leave(); return code })
		next.ServeHTTP(w, r)
	})
}

func (c *sessionCap) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	open := 0
	for range c.server.Sessions() {
		open++
	}
	if open+c.opening >= c.max {
		return false
	}
	c.opening++
	return true
}

func (c *sessionCap) leave() {
	c.mu.Lock()
	c.opening--
	c.mu.Unlock()
}

// sessionLimitCode is the JSON-RPC error code of the refusal: the range
// -32000 to -32099 is the server's own.
const sessionLimitCode = -32000

func (c *sessionCap) refuse(rw http.ResponseWriter) {
	now := time.Now()
	if last := c.lastWarned.Load(); now.UnixNano()-last > int64(10*time.Second) && c.lastWarned.CompareAndSwap(last, now.UnixNano()) {
		c.logger.Warn("refusing new sessions: the session limit is reached (at most one warning per 10s)", "max_sessions", c.max)
	}
	msg := fmt.Sprintf("the server has reached its limit of %d open sessions: close a session you no longer use, or retry later", c.max)
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": sessionLimitCode, "message": msg},
	})
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Retry-After", "10")
	rw.WriteHeader(http.StatusServiceUnavailable)
	_, _ = rw.Write(body)
}
