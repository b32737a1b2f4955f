//go:build unix

package mcpsdk_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/layerbench"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// BenchmarkLayersCPU splits toolmw's CPU per call on go-sdk into layers,
// each an arm of its own server and client session in one process, on
// the in-memory transport and on streamable HTTP over a loopback
// httptest server (one session): bare (twice: the second is the A/A
// control), own (a receiving middleware that recovers and writes one slog
// text line per method, the own-middleware arm of bench/run, after
// layerbench.RecoverLog), stack (a receiving middleware that
// only grows the goroutine's stack to 16 KiB before the SDK's tool handler
// runs, as the adapter's coroutine does: the bare SDK grows each
// request's new goroutine's stack several times, and this arm shows what
// that costs), guard (in memory only: the server's
// transport wrapped by GuardTransport, no middleware), adapter (Install
// with a nil chain: the contained run, the request's fill, the result's
// conversion and encoding), chain (Diagnostics, Normalize and Recover on
// top), audit-sync (the audit interceptor in front, its row formatted by a
// slog text handler on the call). BENCHMARKS.md's hand-run section on
// go-sdk reads its floor from these arms. The method is mcpgo's
// BenchmarkLayersCPU's: each op is one round, 40 steps of 8 calls per
// arm, the arms in a new random order each step, the process's CPU time
// (getrusage) read around each step, the garbage collector off within the
// round and run after it. It reports each arm's CPU per call over the mean
// of the two bare arms' (the 20% trimmed mean over the rounds) as
// <arm>/bare, and the bare arm's CPU per call. The difference between two
// arms is what the layer between them costs.
//
//	go test -run '^$' -bench LayersCPU -benchtime 60x ./toolctx/mcpsdk/
func BenchmarkLayersCPU(b *testing.B) {
	for _, tr := range []toolctx.Transport{toolctx.TransportInMemory, toolctx.TransportStreamableHTTP} {
		b.Run(layerName(tr), func(b *testing.B) { layerbench.Run(b, layerArms(b, tr)) })
	}
}

// BenchmarkLayerCall is one call of each of BenchmarkLayersCPU's arms, in
// a loop of its own, for a CPU profile of one arm:
//
//	go test -run '^$' -bench 'LayerCall/in-memory/bare$' -benchtime 20000x -cpu 1 -cpuprofile /tmp/bare.out ./toolctx/mcpsdk/
func BenchmarkLayerCall(b *testing.B) {
	for _, tr := range []toolctx.Transport{toolctx.TransportInMemory, toolctx.TransportStreamableHTTP} {
		b.Run(layerName(tr), func(b *testing.B) {
			for _, a := range layerArms(b, tr) {
				b.Run(a.Name, func(b *testing.B) {
					a.Call()
					b.ReportAllocs()
					for b.Loop() {
						a.Call()
					}
				})
			}
		})
	}
}

func layerName(tr toolctx.Transport) string {
	if tr == toolctx.TransportStreamableHTTP {
		return "http"
	}
	return "in-memory"
}

// layerArms are BenchmarkLayersCPU's arms on transport tr.
func layerArms(b *testing.B, tr toolctx.Transport) []layerbench.Arm {
	discard := slog.New(slog.DiscardHandler)
	sink := audit.NewSlogSink(slog.NewTextHandler(io.Discard, nil))
	rows := audit.Direct(sink, audit.DirectConfig{FallbackLogger: discard})
	chain := func(ms ...toolctx.Middleware) func(*mcp.Server) {
		ms = append(ms,
			middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover)
		return func(s *mcp.Server) { mcpsdk.Install(s, middleware.New(ms...).Middleware(), mcpsdk.WithTransport(tr)) }
	}
	none := func(*mcp.Server) {}
	arms := []layerbench.Arm{
		{Name: "bare", Call: layerSession(b, tr, none, nil)},
		{Name: "bare2", Call: layerSession(b, tr, none, nil)},
		{Name: "own", Call: layerSession(b, tr, func(s *mcp.Server) {
			s.AddReceivingMiddleware(layerbench.RecoverLog(slog.New(slog.NewTextHandler(io.Discard, nil))))
		}, nil)},
	}
	arms = append(arms, layerbench.Arm{Name: "stack", Call: layerSession(b, tr, func(s *mcp.Server) { s.AddReceivingMiddleware(growFirst) }, nil)})
	if tr == toolctx.TransportInMemory {
		arms = append(arms, layerbench.Arm{Name: "guard", Call: layerSession(b, tr, none, func(t mcp.Transport) mcp.Transport { return mcpsdk.GuardTransport(t) })})
	}
	return append(arms,
		layerbench.Arm{Name: "adapter", Call: layerSession(b, tr, func(s *mcp.Server) { mcpsdk.Install(s, nil, mcpsdk.WithTransport(tr)) }, nil)},
		layerbench.Arm{Name: "chain", Call: layerSession(b, tr, chain(), nil)},
		layerbench.Arm{Name: "audit-sync", Call: layerSession(b, tr, chain(audit.Interceptor(rows)), nil)},
	)
}

// layerSession is a client session of a go-sdk server with one typed tool,
// echo, set up by with, on transport tr (in memory, the server's side
// wrapped by wrap when not nil; or streamable HTTP on a loopback httptest
// server); it returns one call of echo.
func layerSession(b *testing.B, tr toolctx.Transport, with func(*mcp.Server), wrap func(mcp.Transport) mcp.Transport) func() {
	type in struct {
		Q string `json:"q"`
	}
	type out struct {
		Answer string `json:"answer"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, out, error) {
		return nil, out{Answer: in.Q}, nil
	})
	with(s)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "0"}, nil)
	var cs *mcp.ClientSession
	switch tr {
	case toolctx.TransportInMemory:
		st, ct := mcp.NewInMemoryTransports()
		var sst mcp.Transport = st
		if wrap != nil {
			sst = wrap(st)
		}
		ss, err := s.Connect(ctx, sst, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ss.Wait() })
		if cs, err = client.Connect(ctx, ct, nil); err != nil {
			b.Fatal(err)
		}
	case toolctx.TransportStreamableHTTP:
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		b.Cleanup(srv.Close)
		t := http.DefaultTransport.(*http.Transport).Clone()
		b.Cleanup(t.CloseIdleConnections)
		var err error
		if cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: t}}, nil); err != nil {
			b.Fatal(err)
		}
	default:
		b.Fatalf("transport %q", tr)
	}
	b.Cleanup(func() { _ = cs.Close() })
	// New params for each session: the client writes the negotiated
	// protocol version into their _meta in place.
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"q":"hello"}`)}
	return func() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// growFirst is a receiving middleware that grows the goroutine's stack
// before a tools/call goes on, as the adapter's coroutine does before the
// SDK's handler runs on it (internal/contain's reserve): what the bare SDK
// pays for growing its per-request goroutine's stack in the handler.
func growFirst(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			growStack(false)
		}
		return next(ctx, method, req)
	}
}

// growStack grows the calling goroutine's stack, in one copy, to hold an
// 8 KiB frame (to 16 KiB) and touches none of it (touch is always false),
// as internal/contain's reserve does.
//
//go:noinline
func growStack(touch bool) {
	if touch {
		var frame [8 << 10]byte
		keepFrame(frame[:])
	}
}

//go:noinline
func keepFrame([]byte) {}
