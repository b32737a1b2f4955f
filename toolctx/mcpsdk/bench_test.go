package mcpsdk_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

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
