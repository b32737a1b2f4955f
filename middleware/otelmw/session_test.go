package otelmw_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

// sessionPoints returns the data points of mcp.server.session.duration.
func (tel *telemetry) sessionPoints(t testing.TB) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm), "collect")
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "mcp.server.session.duration" {
				require.Equal(t, "s", m.Unit, "in seconds")
				assert.Equal(t, "The duration of the MCP session as observed on the MCP server.", m.Description)
				h, ok := m.Data.(metricdata.Histogram[float64])
				require.True(t, ok, "a float64 histogram, got %T", m.Data)
				return h.DataPoints
			}
		}
	}
	return nil
}

// waitSessions waits until n sessions are recorded (at most 10 s).
func (tel *telemetry) waitSessions(t testing.TB, n uint64) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var points []metricdata.HistogramDataPoint[float64]
	require.Eventually(t, func() bool {
		points = tel.sessionPoints(t)
		var c uint64
		for _, p := range points {
			c += p.Count
		}
		return c >= n
	}, 10*time.Second, 5*time.Millisecond, "want %d sessions recorded", n)
	return points
}

// recordSessions is the go-sdk wiring of otelmw.Sessions: a receiving
// middleware that starts a session when its initialize handshake succeeds
// and ends it when the session closes.
func recordSessions(sessions *otelmw.Sessions, transport toolctx.Transport) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "initialize" || err != nil {
				return res, err
			}
			ss, ok := req.GetSession().(*mcp.ServerSession)
			init, _ := res.(*mcp.InitializeResult)
			if !ok || init == nil {
				return res, err
			}
			s := sessions.Start(otelmw.SessionStart{Transport: transport, ProtocolVersion: init.ProtocolVersion})
			go func() { s.End(context.Background(), otelmw.SessionEnd{Err: ss.Wait()}) }()
			return res, err
		}
	}
}

// A real session on stateful streamable HTTP: it starts with the
// initialize handshake and ends when the client closes it; its duration is
// recorded once, with the version it negotiated, the transport and no
// error.type, in the conventions' buckets.
func TestSessionDurationStreamableHTTP(t *testing.T) {
	tel := newTelemetry(t)
	sessions, err := otelmw.NewSessions(otelmw.WithMeterProvider(tel.mp))
	require.NoError(t, err)
	srv := mcp.NewServer(&mcp.Implementation{Name: "otelmw-test", Version: "1"}, nil)
	srv.AddReceivingMiddleware(recordSessions(sessions, toolctx.TransportStreamableHTTP))
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()

	before := time.Now()
	cl := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	assert.Empty(t, tel.sessionPoints(t), "nothing is recorded while the session is open")
	require.NoError(t, cs.Ping(context.Background(), nil))
	require.NoError(t, cs.Close())
	points := tel.waitSessions(t, 1)
	elapsed := time.Since(before)

	require.Len(t, points, 1)
	p := points[0]
	assert.Equal(t, uint64(1), p.Count)
	assert.Greater(t, p.Sum, 0.0)
	assert.LessOrEqual(t, p.Sum, elapsed.Seconds(), "at most the time from before connecting to after the end")
	assert.Equal(t, otelmw.BucketBoundaries(), p.Bounds, "the conventions' buckets")
	assert.Equal(t, map[string]any{
		"mcp.protocol.version":  "2025-11-25",
		"network.transport":     "tcp",
		"network.protocol.name": "http",
	}, attrs(p.Attributes.ToSlice()))
}

// Several sessions on in-memory transports, one ending with an error: each
// is one measurement; the failed one has error.type.
func TestSessionDurationEnds(t *testing.T) {
	tel := newTelemetry(t)
	sessions, err := otelmw.NewSessions(otelmw.WithMeterProvider(tel.mp))
	require.NoError(t, err)
	srv := mcp.NewServer(&mcp.Implementation{Name: "otelmw-test", Version: "1"}, nil)
	srv.AddReceivingMiddleware(recordSessions(sessions, toolctx.TransportStdio))
	for range 3 {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		require.NoError(t, err)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct,
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
		require.NoError(t, err)
		require.NoError(t, cs.Close())
		_ = ss.Wait()
	}
	s := sessions.Start(otelmw.SessionStart{Transport: toolctx.TransportStdio, ProtocolVersion: "2025-06-18"})
	s.End(context.Background(), otelmw.SessionEnd{Err: fmt.Errorf("keepalive: %w", context.DeadlineExceeded)})
	s.End(context.Background(), otelmw.SessionEnd{}) // once only
	t2 := sessions.Start(otelmw.SessionStart{Transport: toolctx.TransportStdio, ProtocolVersion: "2025-06-18"})
	t2.End(context.Background(), otelmw.SessionEnd{Err: errors.New("broken pipe")})

	points := tel.waitSessions(t, 5)
	byType := map[string]uint64{}
	for _, p := range points {
		a := attrs(p.Attributes.ToSlice())
		assert.Equal(t, "pipe", a["network.transport"])
		assert.Equal(t, "2025-06-18", a["mcp.protocol.version"])
		assert.NotContains(t, a, "network.protocol.name", "not on stdio")
		et, _ := a["error.type"].(string)
		byType[et] += p.Count
	}
	assert.Equal(t, map[string]uint64{"": 3, "timeout": 1, "_OTHER": 1}, byType)
}

func TestNewSessionsOptions(t *testing.T) {
	_, err := otelmw.NewSessions(otelmw.WithRawCause())
	require.ErrorContains(t, err, "NewSessions takes only WithMeterProvider and WithAttributeFilter")
	_, err = otelmw.NewSessions(nil)
	require.ErrorContains(t, err, "nil Option")
	_, err = otelmw.NewSessions(otelmw.WithMeterProvider(nil))
	require.ErrorContains(t, err, "WithMeterProvider(nil)")

	tel := newTelemetry(t)
	sessions, err := otelmw.NewSessions(otelmw.WithMeterProvider(tel.mp),
		otelmw.WithAttributeFilter(func(kv attribute.KeyValue) bool { return kv.Key != "mcp.protocol.version" }))
	require.NoError(t, err)
	sessions.Start(otelmw.SessionStart{Transport: toolctx.TransportSSE, ProtocolVersion: "2025-06-18"}).End(context.Background(), otelmw.SessionEnd{})
	points := tel.waitSessions(t, 1)
	assert.Equal(t, map[string]any{"network.transport": "tcp", "network.protocol.name": "http"}, attrs(points[0].Attributes.ToSlice()))
}
