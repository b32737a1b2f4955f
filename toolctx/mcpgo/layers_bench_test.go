//go:build unix

package mcpgo_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/layerbench"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// BenchmarkLayersCPU splits toolmw's CPU per call on mcp-go in process
// into layers, each an arm of its own server and in-process client in one
// process: bare (twice: the second is the A/A control), recover (mcp-go's
// WithRecovery alone: a deferred recover on the SDK's goroutine, what
// containing a call costs when a runtime.Goexit need not be survived), own
// (WithRecovery and WithLogger into a text handler: the own-middleware arm
// of bench/run), hooks (AddHooks alone: the frame guard and the rejection
// hooks, no middleware), middleware (Middleware(nil) alone: the contained
// run on its coroutine, the request's fill and the result's conversion
// and checks, no hooks), adapter (ServerOption with a nil chain: both, and
// the marks that tie them), chain (Diagnostics, Normalize and Recover on
// top), audit-sync (the audit interceptor in front, its row formatted by a
// slog text handler on the call: what the recommended chain's async writer
// does off the call). BENCHMARKS.md's hand-run section on mcp-go in
// process reads its floor from these arms. Each op is one round: 40 steps
// of 8 calls per arm, the arms in a new random order each step, the
// process's CPU time (getrusage) read around each step, the garbage
// collector off within the round and run after it. It reports each
// arm's CPU per call over the mean of the two bare arms' (the 20%
// trimmed mean over the rounds) as <arm>/bare, and the bare arm's CPU per
// call. The difference between two arms is what the layer between them
// costs.
//
//	go test -run '^$' -bench LayersCPU -benchtime 60x ./toolctx/mcpgo/
func BenchmarkLayersCPU(b *testing.B) { layersCPU(b, layerClient) }

// BenchmarkLayersCPUHTTP is BenchmarkLayersCPU with each arm's client on
// streamable HTTP, to an httptest server on 127.0.0.1 (one session each):
//
//	go test -run '^$' -bench LayersCPUHTTP -benchtime 60x -cpu 1 ./toolctx/mcpgo/
func BenchmarkLayersCPUHTTP(b *testing.B) { layersCPU(b, layerHTTPClient) }

// layersCPU is BenchmarkLayersCPU with the arms' clients made by connect.
func layersCPU(b *testing.B, connect func(*testing.B, ...server.ServerOption) func()) {
	discard := slog.New(slog.DiscardHandler)
	sink := audit.NewSlogSink(slog.NewTextHandler(io.Discard, nil))
	rows := audit.Direct(sink, audit.DirectConfig{FallbackLogger: discard})
	chain := func(ms ...toolctx.Middleware) server.ServerOption {
		ms = append(ms,
			middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover)
		return mcpgo.ServerOption(middleware.New(ms...).Middleware())
	}
	arms := []layerbench.Arm{
		{Name: "bare", Call: connect(b)},
		{Name: "bare2", Call: connect(b)},
		{Name: "recover", Call: connect(b, server.WithRecovery())},
		{Name: "own", Call: connect(b, server.WithRecovery(), server.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))},
		{Name: "hooks", Call: connect(b, func(s *server.MCPServer) {
			h := &server.Hooks{}
			server.WithHooks(h)(s)
			mcpgo.AddHooks(h, nil)
		})},
		{Name: "middleware", Call: connect(b, server.WithToolHandlerMiddleware(mcpgo.Middleware(nil)))},
		{Name: "adapter", Call: connect(b, mcpgo.ServerOption(nil))},
		{Name: "chain", Call: connect(b, chain())},
		{Name: "audit-sync", Call: connect(b, chain(audit.Interceptor(rows)))},
	}
	layerbench.Run(b, arms)
}

// layerServer is an mcp-go server built with opts with one tool, echo.
func layerServer(opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("bench", "0", opts...)
	s.AddTool(mcp.NewTool("echo", mcp.WithString("q")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		q, _ := req.GetArguments()["q"].(string)
		return mcp.NewToolResultText(q), nil
	})
	return s
}

// layerClient is an in-process client of a layerServer built with opts;
// it returns one call of echo.
func layerClient(b *testing.B, opts ...server.ServerOption) func() {
	c, err := client.NewInProcessClient(layerServer(opts...))
	if err != nil {
		b.Fatal(err)
	}
	return layerCall(b, c)
}

// layerHTTPClient is layerClient on streamable HTTP: the server behind an
// httptest server on 127.0.0.1.
func layerHTTPClient(b *testing.B, opts ...server.ServerOption) func() {
	srv := httptest.NewServer(server.NewStreamableHTTPServer(layerServer(opts...)))
	b.Cleanup(srv.Close)
	t := http.DefaultTransport.(*http.Transport).Clone()
	b.Cleanup(t.CloseIdleConnections)
	c, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithHTTPBasicClient(&http.Client{Transport: t}))
	if err != nil {
		b.Fatal(err)
	}
	return layerCall(b, c)
}

// layerCall starts and initializes c and returns one call of echo.
func layerCall(b *testing.B, c *client.Client) func() {
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench-client", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	return func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = map[string]any{"q": "hello"}
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
