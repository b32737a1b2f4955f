package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// The second way for mcp-go is its own server.WithRecovery() plus
// server.WithLogger (a text slog handler into io.Discard), which in v1.2.1
// logs one mcp.request line per JSON-RPC method and one mcp.tool line per
// tool call.
const wayMCPGoMW = "mcpgo-mw"

var mcpgoWays = []string{wayBare, wayMCPGoMW, wayToolmw}

func mcpgoServer(tb testing.TB, way string, handler server.ToolHandlerFunc) *server.MCPServer {
	s, _ := mcpgoServerDrain(tb, way, handler)
	return s
}

// mcpgoServerDrain is mcpgoServer, and the drain of its async audit writer
// (see sdkServerDrain).
func mcpgoServerDrain(tb testing.TB, way string, handler server.ToolHandlerFunc) (*server.MCPServer, func()) {
	switch way {
	case wayToolmw:
		mw, w := fullChainSlog(tb)
		return mcpgoServerWith(tb, way, handler, mw), closer(w)
	case wayToolmwSync:
		return mcpgoServerWith(tb, way, handler, fullChainSyncSlog()), func() {}
	}
	return mcpgoServerWith(tb, way, handler, nil), func() {}
}

// mcpgoServerWith is an mcp-go server with handler as its echo tool, run
// way; the toolmw ways install mw.
func mcpgoServerWith(tb testing.TB, way string, handler server.ToolHandlerFunc, mw toolctx.Middleware) *server.MCPServer {
	var opts []server.ServerOption
	switch way {
	case wayMCPGoMW:
		opts = append(opts, server.WithRecovery(), server.WithLogger(discardLogger()))
	case wayToolmw, wayToolmwSync:
		if mw == nil {
			tb.Fatalf("way %q: no middleware", way)
		}
		opts = append(opts, mcpgo.ServerOption(mw))
	case wayBare:
	default:
		tb.Fatalf("unknown way %q", way)
	}
	s := server.NewMCPServer("bench", "0", opts...)
	s.AddTool(mcp.NewTool("echo", mcp.WithString("q")), handler)
	return s
}

func mcpgoEcho(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q, _ := req.GetArguments()["q"].(string)
	return mcp.NewToolResultText(q), nil
}

func mcpgoStart(tb testing.TB, c *client.Client) *client.Client {
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench-client", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

func mcpgoInProcess(tb testing.TB, s *server.MCPServer) *client.Client {
	c, err := client.NewInProcessClient(s)
	if err != nil {
		tb.Fatal(err)
	}
	return mcpgoStart(tb, c)
}

func mcpgoHTTP(tb testing.TB, s *server.MCPServer, n int) []*client.Client {
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	tb.Cleanup(srv.Close)
	hc := httpClient(tb, n)
	cs := make([]*client.Client, n)
	for i := range cs {
		c, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithHTTPBasicClient(hc))
		if err != nil {
			tb.Fatal(err)
		}
		cs[i] = mcpgoStart(tb, c)
	}
	return cs
}

func mcpgoRequest(args map[string]any) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = args
	return req
}

func mcpgoCall(tb testing.TB, c *client.Client, req mcp.CallToolRequest) {
	if err := mcpgoTry(c, req); err != nil {
		tb.Fatal(err)
	}
}

// mcpgoTry is one call, for RunParallel's goroutines (see sdkTry).
func mcpgoTry(c *client.Client, req mcp.CallToolRequest) error {
	res, err := c.CallTool(context.Background(), req)
	if err == nil && res.IsError {
		err = fmt.Errorf("isError result: %+v", res.Content)
	}
	return err
}

// mcpgoSessions is sdkSessions for mcp-go clients.
func mcpgoSessions(b *testing.B, cs []*client.Client, req mcp.CallToolRequest, drains ...func()) {
	mcpgoCall(b, cs[0], req)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	cpu := startCPU(b)
	if len(cs) == 1 {
		for b.Loop() {
			mcpgoCall(b, cs[0], req)
		}
	} else {
		var next atomic.Int64
		b.SetParallelism(parallelism(len(cs)))
		b.RunParallel(func(pb *testing.PB) {
			c := cs[int(next.Add(1)-1)%len(cs)]
			for pb.Next() {
				if err := mcpgoTry(c, req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	el := time.Since(start)
	cpu.stop(drains...)
	b.ReportMetric(float64(b.N)/el.Seconds(), "calls/s")
}

// BenchmarkMCPGo is tools/call end to end through mark3labs/mcp-go: its
// in-process client, and streamable HTTP on loopback (1 and 8 sessions);
// each bare, with WithRecovery+WithLogger, and with toolmw's full chain;
// calls/s and cpu-ns/op as in BenchmarkSDK.
func BenchmarkMCPGo(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		for _, way := range mcpgoWays {
			b.Run(way, func(b *testing.B) {
				s, drain := mcpgoServerDrain(b, way, mcpgoEcho)
				c := mcpgoInProcess(b, s)
				mcpgoSessions(b, []*client.Client{c}, mcpgoRequest(map[string]any{"q": "hello"}), drain)
			})
		}
	})
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("http-sessions=%d", n), func(b *testing.B) {
			for _, way := range mcpgoWays {
				b.Run(way, func(b *testing.B) {
					s, drain := mcpgoServerDrain(b, way, mcpgoEcho)
					cs := mcpgoHTTP(b, s, n)
					mcpgoSessions(b, cs, mcpgoRequest(map[string]any{"q": "hello"}), drain)
				})
			}
		})
	}
}
