package stack

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/serve"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// Chain is the demo's chain: serve.Chain (the audit row, diagnostics,
// Normalize, Recover), and a deadline for the slow tool alone.
func Chain(w audit.Emitter, diag middleware.DiagnosticsFunc, slowTimeout time.Duration, fallback *slog.Logger) middleware.Chain {
	return serve.Chain(w, diag, fallback).Append(middleware.When(middleware.Tools("slow"), middleware.Timeout(slowTimeout)))
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
	// Access, when set, is the guard that decides who may call what
	// (middleware.RequireScopes, a When over a Matcher; under
	// middleware.Observe to roll it out): it runs first among the guards,
	// and the adapter hides from each caller's tools/list the tools it
	// would refuse that caller (mcpsdk.WithVisibility with
	// middleware.Visibility(Access)), answering a call to one as an
	// unknown tool. Under Observe it refuses nothing and hides nothing, and
	// the row of a call it would have refused notes would_reject. The
	// caller is the identity an HTTP layer gives (httpmw.Authenticate with
	// mcpsdk.ForwardIdentity, as serve.HTTPConfig.Authenticate does).
	Access toolctx.Middleware
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
	chain := middleware.New(o.Outer...).Extend(Chain(o.Audit, serve.Diagnostics(o.Logger), o.SlowTimeout, o.Logger))
	opts := []mcpsdk.Option{mcpsdk.WithTransport(o.Transport), mcpsdk.WithFallbackLogger(o.Logger)}
	if o.Access != nil {
		// The guard and the lists it filters are one value: a caller
		// sees exactly the tools it may call, and under Observe every
		// tool, as it would without the guard.
		chain = chain.Append(o.Access)
		opts = append(opts, mcpsdk.WithVisibility(middleware.Visibility(o.Access)))
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
