package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/examples/server/stack"
	"github.com/toolmw/toolmw/serve"
	"github.com/toolmw/toolmw/toolctx"
)

// demoServer starts the demo server's stack on loopback, as
// examples/server runs it with its default flags over streamable HTTP
// (stateful): stack.NewServer's tools and chain with the in-flight tracker
// outside it (no OpenTelemetry: its flags are off by default),
// serve.Handler's HTTP middleware, the http.Server's timeouts, and its
// audit wiring (examples/server/audit.go): an SQLite store with a local
// spool behind audit.NewAsync's defaults. Logs go to a text handler into
// io.Discard. It returns the MCP endpoint's URL.
func demoServer(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	store, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "audit.db"), sqlstore.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	spool, err := audit.OpenSpool(filepath.Join(dir, "audit.db.spool"), audit.SpoolConfig{FallbackLogger: discardLogger()})
	if err != nil {
		tb.Fatal(err)
	}
	w := audit.NewAsync(store, audit.AsyncConfig{Spool: spool, FallbackLogger: discardLogger()})
	calls := serve.NewInFlight()
	logger := discardLogger()
	s, err := stack.NewServer(stack.ServerConfig{Audit: w, Logger: logger, SDKLogger: logger, SlowTimeout: 2 * time.Second,
		Transport: toolctx.TransportUnknown, Outer: []toolctx.Middleware{calls.Track}})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := serve.Handler(serve.HTTPConfig{Name: "toolmw demo", Server: s, Audit: w, Logger: logger, SDKLogger: logger,
		SessionIdle: 5 * time.Minute, MaxSessions: 1000, WriteTimeout: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	srv.Config.ReadTimeout = 30 * time.Second
	srv.Config.WriteTimeout = time.Minute
	srv.Config.IdleTimeout = 2 * time.Minute
	srv.Start()
	tb.Cleanup(func() {
		srv.Close()
		calls.Cancel()
		_ = w.Close(context.Background())
		_ = store.Close()
	})
	return srv.URL + "/mcp"
}

// bareGreetServer starts a go-sdk server alone with the demo's greet tool
// (the same input, output and answer, registered with mcp.AddTool) behind
// the SDK's streamable HTTP handler with its default options on a plain
// httptest server. It returns the endpoint's URL.
func bareGreetServer(tb testing.TB) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(_ context.Context, _ *mcp.CallToolRequest, in stack.GreetIn) (*mcp.CallToolResult, stack.GreetOut, error) {
		if in.Name == "" {
			return nil, stack.GreetOut{}, fmt.Errorf("name must not be empty")
		}
		g := "Hello, " + in.Name
		if in.Excited {
			g += "!"
		} else {
			g += "."
		}
		return nil, stack.GreetOut{Greeting: g}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// greetParams are a greet call's params, new for each session (see
// echoParams).
func greetParams() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "greet", Arguments: json.RawMessage(`{"name":"Ada"}`)}
}

// benchDemo is BenchmarkInterleaved's demo-http-sessions=8 case (see its
// doc): two bare arms and the demo's stack, eight sessions each.
func benchDemo(b *testing.B, sessions int) {
	arms := []arm{
		{"bare-ns", sessions, sdkFanOut(b, sdkConnect(b, bareGreetServer(b), sessions), greetParams)},
		{"bare2-ns", sessions, sdkFanOut(b, sdkConnect(b, bareGreetServer(b), sessions), greetParams)},
		{"demo-ns", sessions, sdkFanOut(b, sdkConnect(b, demoServer(b), sessions), greetParams)},
	}
	interleave(b, arms)
}
