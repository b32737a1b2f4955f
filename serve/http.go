package serve

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

	"github.com/justinas/alice"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/internal/httpwrap"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// MaxBody is the largest HTTP request body [Handler] reads, in bytes.
const MaxBody = 1 << 20

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

// HTTPConfig configures Handler.
type HTTPConfig struct {
	// Name is what the server calls itself in the answer to a path other
	// than /mcp and /sse ("toolmw demo", "toolmw-proxy"). Required.
	Name string
	// Server is the MCP server the endpoints serve. Required.
	Server *mcp.Server
	// Audit receives one row per HTTP request. Required.
	Audit audit.Emitter
	// Logger gets the diagnostics of HTTP-side failures and the session
	// cap's warnings. Required.
	Logger *slog.Logger
	// SDKLogger is the streamable HTTP handler's own logger (nil: the
	// SDK's default).
	SDKLogger *slog.Logger
	// Stateless serves stateless streamable HTTP (no Mcp-Session-Id).
	Stateless bool
	// SessionIdle is how long a stateful session may go without a request
	// before it is closed. Required, positive.
	SessionIdle time.Duration
	// MaxSessions is the most stateful sessions open at once (no limit
	// when Stateless: no session outlives its request). Required, at
	// least 1.
	MaxSessions int
	// WriteTimeout is the http.Server's WriteTimeout: a POST's write
	// deadline restarts from it once its body is read, and a GET stream's
	// is lifted (see deadlines). Required, positive.
	WriteTimeout time.Duration
	// Active, when not nil, counts the requests in flight other than GET
	// (the session's long-lived stream), for a graceful shutdown.
	Active *atomic.Int64
	// Authenticate, when not nil, authenticates every request
	// (httpmw.Authenticate): it runs inside the HTTP audit row, so that a
	// refusal has its row, and the identity it finds reaches every call,
	// on stateful sessions too, through mcpsdk.ForwardIdentity in front of
	// the SDK's handlers.
	Authenticate func(http.Handler) http.Handler
}

// Handler is the HTTP handler of a toolmw server: /mcp is go-sdk's streamable HTTP
// handler behind httpmw.Recover, a request id, the client address for the
// spans, the HTTP audit row, a body limit (MaxBody), the write deadlines and
// the session cap; any other path is 404.
func Handler(o HTTPConfig) (http.Handler, error) {
	switch {
	case o.Name == "":
		return nil, errors.New("serve: HTTPConfig.Name is empty: name the server for its 404 answer")
	case o.Server == nil:
		return nil, errors.New("serve: HTTPConfig.Server is nil: pass the MCP server")
	case o.Audit == nil:
		return nil, errors.New("serve: HTTPConfig.Audit is nil: pass the audit emitter")
	case o.Logger == nil:
		return nil, errors.New("serve: HTTPConfig.Logger is nil: pass the operator's logger")
	case o.SessionIdle <= 0:
		return nil, fmt.Errorf("serve: HTTPConfig.SessionIdle must be positive, not %v", o.SessionIdle)
	case o.MaxSessions < 1:
		return nil, fmt.Errorf("serve: HTTPConfig.MaxSessions must be at least 1, not %d", o.MaxSessions)
	case o.WriteTimeout <= 0:
		return nil, fmt.Errorf("serve: HTTPConfig.WriteTimeout must be positive, not %v", o.WriteTimeout)
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return o.Server },
		&mcp.StreamableHTTPOptions{Stateless: o.Stateless, Logger: o.SDKLogger,
			// An idle session is closed, and with it its GET stream: a
			// vanished client's session does not stay for good.
			SessionTimeout: o.SessionIdle})
	sessions := &sessionCap{server: o.Server, max: o.MaxSessions, logger: o.Logger, stateless: o.Stateless}
	active := o.Active
	if active == nil {
		active = new(atomic.Int64)
	}
	diag := Diagnostics(o.Logger)
	// Frames go-sdk cannot decode are answered with a fixed error, never
	// with its decoder's text (docs/transports.md).
	frames := httpmw.CheckFrames(mcpsdk.NewFrameGuard(mcpsdk.WithFallbackLogger(o.Logger)))
	authenticate := alice.New()
	if o.Authenticate != nil {
		authenticate = alice.New(o.Authenticate, mcpsdk.ForwardIdentity)
	}
	stack := alice.New(
		httpmw.Recover(httpmw.WithDiagnostics(diag), httpmw.WithFallbackLogger(o.Logger)),
		httpmw.RequestID,
		otelmw.ClientAddress, // client.address and client.port on the spans
		audit.HTTP(o.Audit),
		httpmw.MaxBodyBytes(MaxBody),
		countActive(active),
		deadlines(o.WriteTimeout),
		sessions.limit,
	).Extend(authenticate).Append(frames).Then(audit.CaptureHTTP(mcpHandler))
	// The 2024-11-05 HTTP+SSE transport, for older clients: a GET opens a
	// session (its event stream), POSTs to the URL its endpoint event names
	// carry the calls. mcpsdk.SSE tells the adapter (transport "sse", the
	// session id); the session cap counts these sessions too, and a GET
	// opens one here.
	sseHandler := mcpsdk.SSE(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return o.Server }, nil))
	sseStack := alice.New(
		httpmw.Recover(httpmw.WithDiagnostics(diag), httpmw.WithFallbackLogger(o.Logger)),
		httpmw.RequestID,
		otelmw.ClientAddress,
		audit.HTTP(o.Audit),
		httpmw.MaxBodyBytes(MaxBody),
		countActive(active),
		deadlines(o.WriteTimeout),
		sessions.limitSSE,
	).Extend(authenticate).Append(frames).Then(audit.CaptureHTTP(sseHandler))
	mux := http.NewServeMux()
	mux.Handle("/mcp", stack)
	mux.Handle("/sse", sseStack)
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		http.Error(rw, o.Name+": the MCP endpoints are /mcp (streamable HTTP) and /sse (HTTP+SSE, 2024-11-05)", http.StatusNotFound)
	})
	return mux, nil
}

// countActive counts the requests in flight other than GET (the session's
// server-to-client stream, which lasts as long as the session).
func countActive(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				n.Add(1)
				defer n.Add(-1)
			}
			next.ServeHTTP(rw, r)
		})
	}
}
