package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/internal/layerbench"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// The ways a go-sdk server is run, in the same benchmark run.
const (
	wayBare   = "bare"   // the SDK alone
	waySDKMW  = "sdk-mw" // the SDK with a recover-and-slog receiving middleware
	wayToolmw = "toolmw" // the SDK with toolmw's full chain, audit rows to an async slog writer
	// wayToolmwSync is toolmw's full chain with each audit row written by
	// slog on the call (audit.Direct into a SlogSink): synchronous logging,
	// as the SDKs' own logging middleware does.
	wayToolmwSync = "toolmw-syncslog"
)

var ways = []string{wayBare, waySDKMW, wayToolmw}

type echoIn struct {
	Q string `json:"q"`
}

type echoOut struct {
	Answer string `json:"answer"`
}

// sdkServer is a go-sdk server with one typed echo tool, run way.
func sdkServer(tb testing.TB, way string, tr toolctx.Transport) *mcp.Server {
	s, _ := sdkServerDrain(tb, way, tr)
	return s
}

// sdkServerDrain is sdkServer, and the drain (for cpuMeter.stop) that
// writes what its async audit writer has queued; a no-op for the ways
// without one.
func sdkServerDrain(tb testing.TB, way string, tr toolctx.Transport) (*mcp.Server, func()) {
	switch way {
	case wayToolmw:
		mw, w := fullChainSlog(tb)
		return sdkServerWith(tb, way, tr, mw), closer(w)
	case wayToolmwSync:
		return sdkServerWith(tb, way, tr, fullChainSyncSlog()), func() {}
	}
	return sdkServerWith(tb, way, tr, nil), func() {}
}

// sdkServerWith is a go-sdk server with one typed echo tool, run way; the
// toolmw ways install mw.
func sdkServerWith(tb testing.TB, way string, tr toolctx.Transport, mw toolctx.Middleware) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return nil, echoOut{Answer: in.Q}, nil
	})
	switch way {
	case waySDKMW:
		s.AddReceivingMiddleware(layerbench.RecoverLog(discardLogger()))
	case wayToolmw, wayToolmwSync:
		if mw == nil {
			tb.Fatalf("way %q: no middleware", way)
		}
		mcpsdk.Install(s, mw, mcpsdk.WithTransport(tr))
	case wayBare:
	default:
		tb.Fatalf("unknown way %q", way)
	}
	return s
}

func sdkClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "0"}, nil)
}

func sdkInMemory(tb testing.TB, s *mcp.Server) *mcp.ClientSession {
	return sdkInMemoryVia(tb, s, func(t mcp.Transport) mcp.Transport { return t })
}

// sdkInMemoryVia is sdkInMemory with the server's transport wrapped by
// wrap (mcpsdk.GuardTransport, as the adapter's users serve).
func sdkInMemoryVia(tb testing.TB, s *mcp.Server, wrap func(mcp.Transport) mcp.Transport) *mcp.ClientSession {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), wrap(st), nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := sdkClient().Connect(context.Background(), ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

// sdkHTTP starts a loopback streamable HTTP server for s and connects n
// client sessions to it.
func sdkHTTP(tb testing.TB, s *mcp.Server, n int) []*mcp.ClientSession {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	tb.Cleanup(srv.Close)
	return sdkConnect(tb, srv.URL, n)
}

// httpClient is the HTTP client of one server's client sessions: it keeps
// an idle connection for each of n sessions (the default transport keeps
// two per host, so eight concurrent sessions would open new connections
// all the time, and the benchmark would measure TCP set-up on both sides).
func httpClient(tb testing.TB, n int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 2*n + 2 // a call and a stream per session
	tb.Cleanup(t.CloseIdleConnections)
	return &http.Client{Transport: t}
}

// sdkConnect connects n go-sdk client sessions to the streamable HTTP
// endpoint url.
func sdkConnect(tb testing.TB, url string, n int) []*mcp.ClientSession {
	hc := httpClient(tb, n)
	css := make([]*mcp.ClientSession, n)
	for i := range css {
		cs, err := sdkClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = cs.Close() })
		css[i] = cs
	}
	return css
}

func sdkCall(tb testing.TB, cs *mcp.ClientSession, params *mcp.CallToolParams) {
	if err := sdkTry(cs, params); err != nil {
		tb.Fatal(err)
	}
}

// sdkTry is one call; from RunParallel's goroutines, where Fatal may not be
// called, its error goes to Error.
func sdkTry(cs *mcp.ClientSession, params *mcp.CallToolParams) error {
	res, err := cs.CallTool(context.Background(), params)
	if err == nil && res.IsError {
		err = fmt.Errorf("isError result: %+v", res.Content)
	}
	return err
}

// echoParams returns new params for each benchmark: the go-sdk client
// writes the negotiated protocol version into the params' _meta in place,
// so params shared by an in-memory session (2026-07-28) and a stateful HTTP
// session (which rejects that version) break the second one.
func echoParams() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"q":"hello"}`)}
}

// sdkSessions runs tools/call over css, one goroutine per session when
// there are several (RunParallel with b.SetParallelism so that the
// goroutines number len(css)), reporting calls/s and cpu-ns/op (drains run
// before the CPU time is read: see cpuMeter.stop).
func sdkSessions(b *testing.B, css []*mcp.ClientSession, params *mcp.CallToolParams, drains ...func()) {
	sdkCall(b, css[0], params) // warm up the session
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	cpu := startCPU(b)
	if len(css) == 1 {
		for b.Loop() {
			sdkCall(b, css[0], params)
		}
	} else {
		var next atomic.Int64
		b.SetParallelism(parallelism(len(css)))
		b.RunParallel(func(pb *testing.PB) {
			cs := css[int(next.Add(1)-1)%len(css)]
			for pb.Next() {
				if err := sdkTry(cs, params); err != nil {
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

// parallelism is the b.SetParallelism argument that runs at least n
// goroutines: n rounded up to a multiple of GOMAXPROCS.
func parallelism(n int) int {
	p := runtime.GOMAXPROCS(0)
	return (n + p - 1) / p
}

// BenchmarkSDK is tools/call end to end through the official go-sdk:
// in-memory, and streamable HTTP on loopback with 1 and 8 concurrent
// sessions; each bare, with its own recover+slog middleware, and with
// toolmw's full chain (audit rows to an async writer into a slog sink).
// Each reports calls/s and cpu-ns/op, the process CPU time per call, client
// and server together (one process), the audit writer's work included.
func BenchmarkSDK(b *testing.B) {
	b.Run("in-memory", func(b *testing.B) {
		for _, way := range ways {
			b.Run(way, func(b *testing.B) {
				s, drain := sdkServerDrain(b, way, toolctx.TransportInMemory)
				cs := sdkInMemory(b, s)
				sdkSessions(b, []*mcp.ClientSession{cs}, echoParams(), drain)
			})
		}
	})
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("http-sessions=%d", n), func(b *testing.B) {
			for _, way := range ways {
				b.Run(way, func(b *testing.B) {
					s, drain := sdkServerDrain(b, way, toolctx.TransportStreamableHTTP)
					css := sdkHTTP(b, s, n)
					sdkSessions(b, css, echoParams(), drain)
				})
			}
		})
	}
}
