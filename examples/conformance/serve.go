package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/justinas/alice"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// The SDKs the server can be built on (-sdk).
const (
	sdkGo    = "go-sdk"
	sdkMCPGo = "mcp-go"
)

// stack is toolmw's recommended setup, as the README shows it: the
// tool-call chain (audit outermost, diagnostics, normalize, recover) and the
// HTTP-side stack around the SDK's streamable handler.
type stack struct {
	rows  *audit.Async
	chain middleware.Chain
	http  alice.Chain
}

func newStack(logger *slog.Logger) *stack {
	rows := audit.NewAsync(audit.NewSlogSink(logger.Handler()), audit.AsyncConfig{FallbackLogger: logger})
	diag := func(ctx context.Context, ev middleware.DiagnosticEvent) {
		logger.ErrorContext(ctx, "tool call failed", "err", ev.Cause(), "call", ev.Details, "code", ev.Code)
	}
	return &stack{
		rows: rows,
		chain: middleware.New(
			audit.Interceptor(rows),
			middleware.Diagnostics(diag),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
		),
		http: alice.New(
			httpmw.Recover(httpmw.WithDiagnostics(diag), httpmw.WithFallbackLogger(logger)),
			httpmw.RequestID,
			audit.HTTP(rows),
			httpmw.MaxBodyBytes(1<<20),
		),
	}
}

func (s *stack) wrapHTTP(h http.Handler) http.Handler { return s.http.Then(audit.CaptureHTTP(h)) }

func (s *stack) close() { _ = s.rows.Close(context.Background()) }

// handler returns the server's HTTP handler, which serves MCP at /mcp, and
// a function to call once the HTTP server has stopped: it ends the MCP
// sessions still open and flushes the audit log. Both SDKs' own
// DNS-rebinding protection stays on.
func handler(sdk string, withToolmw bool, logger *slog.Logger) (http.Handler, func(), error) {
	var st *stack
	if withToolmw {
		st = newStack(logger)
	}
	var h http.Handler
	var endSessions func()
	switch sdk {
	case sdkGo:
		server := newServer()
		if st != nil {
			mcpsdk.Install(server, st.chain.Middleware(), mcpsdk.WithFallbackLogger(logger))
		}
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
			&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil), Logger: logger})
		if st != nil {
			// A request go-sdk cannot decode is answered with a fixed
			// message, not its decoder's text (docs/transports.md).
			h = httpmw.CheckFrames(mcpsdk.NewFrameGuard(mcpsdk.WithFallbackLogger(logger)))(h)
		}
		endSessions = func() {
			for ss := range server.Sessions() {
				_ = ss.Close()
			}
		}
	case sdkMCPGo:
		var opts []mcpgoserver.ServerOption
		if st != nil {
			opts = append(opts, mcpgo.ServerOption(st.chain.Middleware(), mcpgo.WithFallbackLogger(logger)))
		}
		srv := mcpgoserver.NewStreamableHTTPServer(newMCPGoServer(opts...), mcpgoserver.WithEndpointPath("/mcp"))
		h = srv
		endSessions = func() { _ = srv.Shutdown(context.Background()) }
	default:
		if st != nil {
			st.close()
		}
		return nil, nil, fmt.Errorf("unknown -sdk %q: use %s or %s", sdk, sdkGo, sdkMCPGo)
	}
	shutdown := endSessions
	if st != nil {
		h = st.wrapHTTP(h)
		shutdown = func() { endSessions(); st.close() }
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return mux, shutdown, nil
}
