package outside

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

// sessionCount is how many sessions mcp.server.session.duration recorded.
func sessionCount(t testing.TB, reader *sdkmetric.ManualReader) uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "mcp.server.session.duration" {
				for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					n += p.Count
				}
			}
		}
	}
	return n
}

// TestSessionDurationEndsByDisconnect: go-sdk sessions wired as the demo
// and otelmw's example wire them (start at initialize, end when the
// session's Wait returns) on stdio, stateful streamable HTTP and SSE, each
// ended not by the client's close but by its going away (the pipe or the
// TCP connection dropped): every session's duration is recorded, once.
func TestSessionDurationEndsByDisconnect(t *testing.T) {
	for _, tr := range []string{"stdio", "http", "sse"} {
		t.Run(tr, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			sessions, err := otelmw.NewSessions(otelmw.WithMeterProvider(mp))
			require.NoError(t, err)
			s := mcp.NewServer(&mcp.Implementation{Name: "sessions", Version: "0"}, nil)
			ended := make(chan struct{}, 4)
			s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					if method != "initialize" || err != nil {
						return res, err
					}
					ss, _ := req.GetSession().(*mcp.ServerSession)
					init, _ := res.(*mcp.InitializeResult)
					st := sessions.Start(otelmw.SessionStart{Transport: toolctx.TransportStreamableHTTP, ProtocolVersion: init.ProtocolVersion})
					go func() {
						st.End(context.Background(), otelmw.SessionEnd{Err: ss.Wait()})
						ended <- struct{}{}
					}()
					return res, err
				}
			})
			// A client of 2025-11-25 initializes (a 2026-07-28 one has no
			// session to record).
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil)
			old := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
			ctx := context.Background()
			var drop func()
			switch tr {
			case "stdio":
				c2sR, c2sW := io.Pipe()
				s2cR, s2cW := io.Pipe()
				_, err := s.Connect(ctx, &mcp.IOTransport{Reader: c2sR, Writer: s2cW}, nil)
				require.NoError(t, err)
				_, err = client.Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, old)
				require.NoError(t, err)
				drop = func() { _ = c2sW.Close(); _ = s2cR.Close() } // the client process went away
			default:
				get := func(*http.Request) *mcp.Server { return s }
				var h http.Handler = mcp.NewStreamableHTTPHandler(get, nil)
				if tr == "sse" {
					h = mcp.NewSSEHandler(get, nil)
				}
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				var ct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}
				if tr == "sse" {
					ct = &mcp.SSEClientTransport{Endpoint: srv.URL}
				}
				cs, err := client.Connect(ctx, ct, old)
				require.NoError(t, err)
				t.Cleanup(func() { _ = cs.Close() })
				drop = srv.CloseClientConnections
			}
			require.Zero(t, sessionCount(t, reader), "the session is open")
			drop()
			select {
			case <-ended:
			case <-time.After(time.Minute):
				t.Fatalf("%s: the session never ended after its client went away: no duration recorded", tr)
			}
			require.Equal(t, uint64(1), sessionCount(t, reader), "recorded once")
		})
	}
}
