// Package stack builds the demo server's MCP server and HTTP handler: its
// six tools, the recommended chain in front of them, and the HTTP middleware
// around go-sdk's streamable HTTP handler. The command in examples/server
// adds flags, the audit store, logging, telemetry and shutdown around it;
// the benchmarks (package bench) measure the same stack, so that what is
// measured is what the demo runs.
package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/justinas/alice"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// MaxBody is the largest HTTP request body the server reads.
const MaxBody = 1 << 20

// Diagnostics is the operator's view of unexpected failures: the raw
// error, the call's details and, for a panic, the stack, logged at error
// level to logger.
func Diagnostics(logger *slog.Logger) middleware.DiagnosticsFunc {
	return func(ctx context.Context, ev middleware.DiagnosticEvent) {
		attrs := []any{"code", ev.Code, "err", errs.Describe(ev.Cause())}
		if !ev.Details.IsZero() {
			attrs = append(attrs, "call", ev.Details)
		}
		if pe := errs.PanicOf(ev.Cause()); pe != nil {
			attrs = append(attrs, "stack", string(pe.Stack))
		}
		logger.ErrorContext(ctx, "tool call failed", attrs...)
	}
}

// Chain is the recommended chain, outermost first: the audit row sees
// everything (panics, timeouts, guards), diagnostics gets raw causes,
// Normalize fills the public envelope, Recover turns panics into failures,
// and the slow tool alone gets a deadline. A row the emitter cannot take
// goes to fallback.
func Chain(w audit.Emitter, diag middleware.DiagnosticsFunc, slowTimeout time.Duration, fallback *slog.Logger) middleware.Chain {
	return middleware.New(
		audit.Interceptor(w, audit.WithFallbackLogger(fallback)),
		middleware.Diagnostics(diag),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.When(middleware.Tools("slow"), middleware.Timeout(slowTimeout)),
	)
}

// ServerConfig configures NewServer.
type ServerConfig struct {
	// Audit receives one row per call (the demo: an audit.Async into the
	// store). Required.
	Audit audit.Emitter
	// Logger gets the diagnostics of failed calls and the rows Audit could
	// not take. Required.
	Logger *slog.Logger
	// SDKLogger is go-sdk's own logger (nil: the SDK's default).
	SDKLogger *slog.Logger
	// SlowTimeout is the slow tool's deadline. Required, positive.
	SlowTimeout time.Duration
	// Transport is what the adapter tells the chain when it cannot detect
	// the transport itself (TransportUnknown for streamable HTTP, which is
	// detected per call; TransportStdio for stdio).
	Transport toolctx.Transport
	// Outer are interceptors outside the recommended chain, outermost
	// first (the demo: OpenTelemetry, and the tracking of calls in flight
	// for shutdown).
	Outer []toolctx.Middleware
	// Guards are interceptors inside the recommended chain, innermost
	// (the demo: its rate limit, bulkhead and cache), so that their
	// rejections are audited and normalized like any failure.
	Guards []toolctx.Middleware
	// Scopes, when set, is the per-tool scope policy: RequireScopes(*Scopes)
	// runs first among the guards, and the adapter hides from each caller's
	// tools/list the tools the policy would refuse it
	// (mcpsdk.WithVisibility(Scopes.Allows)), answering a call to one as
	// an unknown tool. The caller is the identity an HTTP layer gives
	// (httpmw.Authenticate with mcpsdk.ForwardIdentity, or go-sdk's
	// auth.RequireBearerToken).
	Scopes *middleware.ScopePolicy
}

// NewServer builds the go-sdk server with the demo tools behind the
// chain: Outer, then Chain.
func NewServer(o ServerConfig) (*mcp.Server, error) {
	switch {
	case o.Audit == nil:
		return nil, errors.New("stack: ServerConfig.Audit is nil: pass the audit emitter")
	case o.Logger == nil:
		return nil, errors.New("stack: ServerConfig.Logger is nil: pass the operator's logger")
	case o.SlowTimeout <= 0:
		return nil, fmt.Errorf("stack: ServerConfig.SlowTimeout must be positive, not %v", o.SlowTimeout)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "toolmw-demo", Version: "0.1.0"}, &mcp.ServerOptions{Logger: o.SDKLogger})
	if err := AddTools(server); err != nil {
		return nil, err
	}
	chain := middleware.New(o.Outer...).Extend(Chain(o.Audit, Diagnostics(o.Logger), o.SlowTimeout, o.Logger))
	opts := []mcpsdk.Option{mcpsdk.WithTransport(o.Transport), mcpsdk.WithFallbackLogger(o.Logger)}
	if o.Scopes != nil {
		// The policy and the lists it filters are one value: a caller
		// sees exactly the tools it may call.
		chain = chain.Append(middleware.RequireScopes(*o.Scopes))
		opts = append(opts, mcpsdk.WithVisibility(o.Scopes.Allows))
	}
	chain = chain.Append(o.Guards...)
	mcpsdk.Install(server, chain.Middleware(), opts...)
	return server, nil
}

// AddTools registers the six demo tools on s.
func AddTools(s *mcp.Server) error {
	return errors.Join(
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone: succeeds with typed input and output (an empty name is a public invalid-arguments error)."}, greet),
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "divide", Description: "Divides a by b. Pass a string for a number to see validation feedback."}, divide),
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "lookup_order", Description: "Looks up an order. Only order 1 exists: any other id is a public not-found error."}, lookupOrder),
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "sales_report", Description: "Builds a sales report. Its backend is down: the raw error stays on the server."}, salesReport),
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "crash", Description: "Panics, as a tool with a bug would. The server keeps running."}, crash),
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "slow", Description: "Works for the given number of seconds; the server gives it a deadline (-slow-timeout)."}, slow),
	)
}

// HTTPConfig configures Handler.
type HTTPConfig struct {
	// Server is the MCP server (from NewServer). Required.
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

// Handler is the demo's HTTP handler: /mcp is go-sdk's streamable HTTP
// handler behind httpmw.Recover, a request id, the client address for the
// spans, the HTTP audit row, a body limit (MaxBody), the write deadlines and
// the session cap; any other path is 404.
func Handler(o HTTPConfig) (http.Handler, error) {
	switch {
	case o.Server == nil:
		return nil, errors.New("stack: HTTPConfig.Server is nil: pass the server NewServer built")
	case o.Audit == nil:
		return nil, errors.New("stack: HTTPConfig.Audit is nil: pass the audit emitter")
	case o.Logger == nil:
		return nil, errors.New("stack: HTTPConfig.Logger is nil: pass the operator's logger")
	case o.SessionIdle <= 0:
		return nil, fmt.Errorf("stack: HTTPConfig.SessionIdle must be positive, not %v", o.SessionIdle)
	case o.MaxSessions < 1:
		return nil, fmt.Errorf("stack: HTTPConfig.MaxSessions must be at least 1, not %d", o.MaxSessions)
	case o.WriteTimeout <= 0:
		return nil, fmt.Errorf("stack: HTTPConfig.WriteTimeout must be positive, not %v", o.WriteTimeout)
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
		http.Error(rw, "toolmw demo: the MCP endpoints are /mcp (streamable HTTP) and /sse (HTTP+SSE, 2024-11-05)", http.StatusNotFound)
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

// InFlight tracks the tool calls in flight, and cancels them all when a
// shutdown's grace period is over: its last word to calls that outlived it.
// A cancelled call ends as such, and its audit row says so. Create one with
// NewInFlight.
type InFlight struct {
	n      atomic.Int64 // calls running now
	stop   context.Context
	cancel context.CancelFunc
}

// NewInFlight returns a tracker with no call in flight.
func NewInFlight() *InFlight {
	c := &InFlight{}
	c.stop, c.cancel = context.WithCancel(context.Background())
	return c
}

// Track is the interceptor that counts each call and cancels its context
// when Cancel is called. It goes first in the chain.
func (c *InFlight) Track(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		c.n.Add(1)
		defer c.n.Add(-1)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		unregister := context.AfterFunc(c.stop, cancel)
		defer unregister()
		return next.CallTool(ctx, req)
	})
}

// Running is how many tracked calls are in flight now.
func (c *InFlight) Running() int64 { return c.n.Load() }

// Cancel cancels the context of every tracked call, those in flight and
// those still to come.
func (c *InFlight) Cancel() { c.cancel() }
