package outside

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
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
// ended not by the client's close but by its going away: every session's
// duration is recorded, once.
//
//   - stdio, sse: the pipe or the TCP connection drops; the server sees it.
//   - http: the TCP connections drop; go-sdk's client sees its GET stream
//     fail and ends the session with a DELETE, on a new connection.
//   - http-vanished: the client is gone for good (killed): no request
//     reaches the server again, no DELETE; the session idle timeout the
//     demo sets (serve.HTTPConfig.SessionIdle) ends it.
func TestSessionDurationEndsByDisconnect(t *testing.T) {
	for _, tr := range []string{"stdio", "http", "http-vanished", "sse"} {
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
				var opts *mcp.StreamableHTTPOptions
				if tr == "http-vanished" {
					// Short, so that the test is quick; the timer starts
					// once no request is in flight, so the check that the
					// session is open is made while a call holds it open.
					opts = &mcp.StreamableHTTPOptions{SessionTimeout: 200 * time.Millisecond}
				}
				var h http.Handler = mcp.NewStreamableHTTPHandler(get, opts)
				if tr == "sse" {
					h = mcp.NewSSEHandler(get, nil)
				}
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				// No keep-alive: a request after the drop dials anew. With
				// keep-alives the client's DELETE could be written to a
				// pooled connection the server had just closed, fail (a
				// DELETE is not retried), and leave the session open: the
				// test then failed now and then under load, though nothing
				// in toolmw was wrong.
				gone := &vanishing{base: &http.Transport{DisableKeepAlives: true}}
				hc := &http.Client{Transport: gone}
				var ct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1, HTTPClient: hc}
				if tr == "sse" {
					ct = &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: hc}
				}
				cs, err := client.Connect(ctx, ct, old)
				require.NoError(t, err)
				t.Cleanup(func() { _ = cs.Close() })
				drop = srv.CloseClientConnections
				if tr == "http-vanished" {
					held := holdCall(t, s, cs)
					drop = func() {
						gone.vanish()
						srv.CloseClientConnections()
						held()
					}
				}
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

// vanishing is a client's HTTP transport that can vanish: after vanish,
// no request leaves it, as when the client's process was killed.
type vanishing struct {
	base http.RoundTripper
	gone atomic.Bool
}

func (v *vanishing) vanish() { v.gone.Store(true) }

func (v *vanishing) RoundTrip(req *http.Request) (*http.Response, error) {
	if v.gone.Load() {
		return nil, errors.New("the client is gone")
	}
	return v.base.RoundTrip(req)
}

// holdCall adds a tool that waits until released and calls it from cs, so
// that a request of the session is in flight (go-sdk's idle timer does not
// run while one is). It returns once the call is running on the server; the
// function it returns releases the tool.
func holdCall(t *testing.T, s *mcp.Server, cs *mcp.ClientSession) (release func()) {
	t.Helper()
	running, released := make(chan struct{}), make(chan struct{})
	s.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(running)
			select {
			case <-released:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{}, nil
		})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hold"})
	}()
	select {
	case <-running:
	case <-time.After(time.Minute):
		t.Fatal("the held call never reached the tool")
	}
	t.Cleanup(func() { <-done })
	return func() { close(released) }
}
