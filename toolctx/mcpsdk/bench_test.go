package mcpsdk_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// benchServer is a server with one typed tool, bare or with the full toolmw
// chain: After (no-op hook, the stand-in for audit) + Diagnostics +
// Normalize + Recover.
func benchServer(withChain bool) *mcp.Server {
	type in struct {
		Q string `json:"q"`
	}
	type out struct {
		Answer string `json:"answer"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, out, error) {
		return nil, out{Answer: in.Q}, nil
	})
	if withChain {
		chain := middleware.New(
			middleware.After(func(context.Context, middleware.CallInfo) {}),
			middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
		)
		mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportInMemory))
	}
	return s
}

func benchCalls(b *testing.B, cs *mcp.ClientSession) {
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"q":"hello"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkInMemory(b *testing.B) {
	for _, bc := range []struct {
		name  string
		chain bool
	}{{"bare", false}, {"toolmw", true}} {
		b.Run(bc.name, func(b *testing.B) {
			st, ct := mcp.NewInMemoryTransports()
			ss, err := benchServer(bc.chain).Connect(context.Background(), st, nil)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := newClient().Connect(context.Background(), ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = cs.Close(); _ = ss.Wait() }()
			benchCalls(b, cs)
		})
	}
}

func BenchmarkStreamableHTTP(b *testing.B) {
	for _, bc := range []struct {
		name  string
		chain bool
	}{{"bare", false}, {"toolmw", true}} {
		b.Run(bc.name, func(b *testing.B) {
			s := benchServer(bc.chain)
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
			defer srv.Close()
			cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = cs.Close() }()
			benchCalls(b, cs)
		})
	}
}

// BenchmarkAdapterOverhead measures what the adapter and the full chain add
// to one tools/call, without the SDK's transport and JSON work: the SDK
// method handler is a function returning a fixed result.
func BenchmarkAdapterOverhead(b *testing.B) {
	result := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"answer":"hello"}`}}, StructuredContent: json.RawMessage(`{"answer":"hello"}`)}
	next := func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) { return result, nil }
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "echo", Arguments: json.RawMessage(`{"q":"hello"}`)}}
	chain := middleware.New(
		middleware.After(func(context.Context, middleware.CallInfo) {}),
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	for _, bc := range []struct {
		name string
		h    mcp.MethodHandler
	}{
		{"bare", next},
		{"adapter-only", mcpsdk.Middleware(nil)(next)},
		{"toolmw", mcpsdk.Middleware(chain.Middleware())(next)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := bc.h(ctx, "tools/call", req)
				if err != nil || res != result {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkInterleaved calls a bare server and a toolmw server alternately,
// in the same loop, so that load on the machine affects both alike; it
// reports each one's time per call and the overhead in percent.
func BenchmarkInterleaved(b *testing.B) {
	connectInMem := func(s *mcp.Server) (*mcp.ClientSession, func()) {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.Connect(context.Background(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		cs, err := newClient().Connect(context.Background(), ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		return cs, func() { _ = cs.Close(); _ = ss.Wait() }
	}
	connectHTTP := func(s *mcp.Server) (*mcp.ClientSession, func()) {
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return cs, func() { _ = cs.Close(); srv.Close() }
	}
	for _, tc := range []struct {
		name    string
		connect func(*mcp.Server) (*mcp.ClientSession, func())
	}{{"in-memory", connectInMem}, {"streamable-http", connectHTTP}} {
		b.Run(tc.name, func(b *testing.B) {
			bare, closeBare := tc.connect(benchServer(false))
			defer closeBare()
			tm, closeTM := tc.connect(benchServer(true))
			defer closeTM()
			params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"q":"hello"}`)}
			ctx := context.Background()
			var tBare, tTM time.Duration
			call := func(cs *mcp.ClientSession, acc *time.Duration) {
				start := time.Now()
				res, err := cs.CallTool(ctx, params)
				*acc += time.Since(start)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			i := 0
			for b.Loop() {
				// Alternate which goes first.
				if i%2 == 0 {
					call(bare, &tBare)
					call(tm, &tTM)
				} else {
					call(tm, &tTM)
					call(bare, &tBare)
				}
				i++
			}
			b.ReportMetric(float64(tBare.Nanoseconds())/float64(i), "bare-ns/call")
			b.ReportMetric(float64(tTM.Nanoseconds())/float64(i), "toolmw-ns/call")
			b.ReportMetric(100*(float64(tTM)-float64(tBare))/float64(tBare), "overhead-%")
		})
	}
}
