package otelmw_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	gclient "github.com/mark3labs/mcp-go/client"
	gtransport "github.com/mark3labs/mcp-go/client/transport"
	gmcp "github.com/mark3labs/mcp-go/mcp"
	gserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// canary is the raw secret every failing tool puts in its cause.
const canary = "CANARY-postgres://admin:hunter2@db.internal:5432"

// telemetry is a real OpenTelemetry SDK pipeline that keeps what it gets.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	prop   propagation.TextMapPropagator
}

func newTelemetry(t testing.TB) *telemetry {
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	tel.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

func (tel *telemetry) options(extra ...otelmw.Option) []otelmw.Option {
	return append([]otelmw.Option{
		otelmw.WithTracerProvider(tel.tp), otelmw.WithMeterProvider(tel.mp), otelmw.WithPropagator(tel.prop),
	}, extra...)
}

// waitSpans waits until n spans have ended and returns them.
func (tel *telemetry) waitSpans(t testing.TB, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	require.Eventually(t, func() bool { return len(tel.spans.Ended()) >= n }, time.Minute, 5*time.Millisecond, "want %d ended spans", n)
	return tel.spans.Ended()
}

// histogram returns the data points of mcp.server.operation.duration.
func (tel *telemetry) histogram(t testing.TB) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	points, err := tel.collect()
	require.NoError(t, err)
	return points
}

// waitHistogram waits until mcp.server.operation.duration holds n
// measurements in all and returns its data points. otelmw records a call's
// measurement after it ends the call's span, so a test that has seen the
// span end waits for the measurement too.
func (tel *telemetry) waitHistogram(t testing.TB, n uint64) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var (
		points []metricdata.HistogramDataPoint[float64]
		err    error
		total  uint64
	)
	require.Eventually(t, func() bool {
		points, err = tel.collect()
		total = 0
		for _, pt := range points {
			total += pt.Count
		}
		return err != nil || total >= n
	}, 30*time.Second, 5*time.Millisecond, "want %d measurements", n)
	require.NoError(t, err)
	return points
}

// collect returns the data points of mcp.server.operation.duration.
func (tel *telemetry) collect() ([]metricdata.HistogramDataPoint[float64], error) {
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		return nil, fmt.Errorf("collect: %w", err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "mcp.server.operation.duration" {
				if m.Unit != "s" {
					return nil, fmt.Errorf("the histogram is in %q, not seconds", m.Unit)
				}
				h, ok := m.Data.(metricdata.Histogram[float64])
				if !ok {
					return nil, fmt.Errorf("a float64 histogram, got %T", m.Data)
				}
				return h.DataPoints, nil
			}
		}
	}
	return nil, nil
}

// attrs returns a span's or point's attributes as a map.
func attrs(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// rows keeps the audit rows.
type rows struct {
	mu  sync.Mutex
	got []audit.Record
}

func (r *rows) Emit(_ context.Context, rec audit.Record) {
	r.mu.Lock()
	r.got = append(r.got, rec)
	r.mu.Unlock()
}

func (r *rows) all() []audit.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]audit.Record(nil), r.got...)
}

// requests keeps the Request of every call, as the chain saw it.
type requests struct {
	mu  sync.Mutex
	got map[string]toolctx.Request // by call id
}

func (r *requests) capture(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		r.mu.Lock()
		if r.got == nil {
			r.got = map[string]toolctx.Request{}
		}
		r.got[req.CallID] = *req
		r.mu.Unlock()
		return next.CallTool(ctx, req)
	})
}

func (r *requests) byID(id string) (toolctx.Request, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	req, ok := r.got[id]
	return req, ok
}

// server is the server side of a test: its telemetry, audit rows,
// requests and chain. The "block" tool sends on blocking when it runs: the
// test then cancels the call.
type server struct {
	tel      *telemetry
	rows     *rows
	reqs     *requests
	chain    middleware.Chain
	blocking chan struct{}
}

// newChain is the recommended chain with otelmw outermost.
func newChain(t testing.TB, tel *telemetry, extra ...otelmw.Option) *server {
	otel, err := otelmw.New(tel.options(extra...)...)
	require.NoError(t, err, "otelmw.New")
	s := &server{tel: tel, rows: &rows{}, reqs: &requests{}, blocking: make(chan struct{}, 8)}
	s.chain = middleware.New(
		otel,
		s.reqs.capture,
		audit.Interceptor(s.rows),
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.When(middleware.Tools("slow"), middleware.Timeout(50*time.Millisecond)),
	)
	return s
}

type greetIn struct {
	Name string `json:"name"`
}
type greetOut struct {
	Greeting string `json:"greeting"`
}
type divideIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}
type divideOut struct {
	Q float64 `json:"q"`
}
type empty struct{}

// tools are the behaviour table's tools, as toolmw handlers.
func (s *server) tools() map[string]toolctx.Handler {
	return map[string]toolctx.Handler{
		"greet": toolctx.Typed(func(_ context.Context, _ *toolctx.Request, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "."}, nil
		}),
		"divide": toolctx.Typed(func(_ context.Context, _ *toolctx.Request, in divideIn) (divideOut, error) {
			if in.B == 0 {
				return divideOut{}, errs.InvalidArguments("b must not be zero")
			}
			return divideOut{Q: in.A / in.B}, nil
		}),
		"lookup": toolctx.Typed(func(context.Context, *toolctx.Request, empty) (empty, error) {
			return empty{}, errs.NotFound("order 42 does not exist").WithCause(errors.New("select: " + canary))
		}),
		"report": toolctx.Typed(func(context.Context, *toolctx.Request, empty) (empty, error) {
			return empty{}, errors.New("dial " + canary + ": connection refused")
		}),
		"crash": toolctx.Typed(func(context.Context, *toolctx.Request, empty) (empty, error) {
			panic("crash tool: " + canary)
		}),
		"slow": toolctx.Typed(func(ctx context.Context, _ *toolctx.Request, _ empty) (empty, error) {
			<-ctx.Done()
			return empty{}, errors.New("late: " + canary)
		}),
		"block": toolctx.Typed(func(ctx context.Context, _ *toolctx.Request, _ empty) (empty, error) {
			s.blocking <- struct{}{}
			<-ctx.Done()
			return empty{}, errors.New("canceled: " + canary)
		}),
	}
}

// client calls tools over one adapter and transport.
type client interface {
	// call calls tool; a protocol error is returned as err.
	call(ctx context.Context, tool string, args map[string]any, meta map[string]any) (isError bool, err error)
}

type fixture struct {
	name string
	http bool
	// open starts a server with chain s and returns a client of it.
	open func(t *testing.T, s *server) client
}

var fixtures = []fixture{
	{"go-sdk/in-memory", false, openSDK(false)},
	{"go-sdk/streamable-http", true, openSDK(true)},
	{"mcp-go/in-process", false, openMCPGo(false)},
	{"mcp-go/streamable-http", true, openMCPGo(true)},
}

type sdkClient struct{ cs *mcp.ClientSession }

func (c sdkClient) call(ctx context.Context, tool string, args map[string]any, meta map[string]any) (bool, error) {
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if meta != nil {
		p.Meta = meta
	}
	res, err := c.cs.CallTool(ctx, p)
	if err != nil {
		return false, err
	}
	return res.IsError, nil
}

func openSDK(overHTTP bool) func(t *testing.T, s *server) client {
	return func(t *testing.T, s *server) client {
		srv := mcp.NewServer(&mcp.Implementation{Name: "otelmw-test", Version: "1"}, nil)
		for name, h := range s.tools() {
			if name == "divide" {
				continue
			}
			require.NoError(t, mcpsdk.AddTool(srv, &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, h), "add %s", name)
		}
		// divide gets a typed schema, so that the SDK validates "b".
		require.NoError(t, mcpsdk.AddTypedTool(srv, &mcp.Tool{Name: "divide"}, func(_ context.Context, _ *toolctx.Request, in divideIn) (divideOut, error) {
			if in.B == 0 {
				return divideOut{}, errs.InvalidArguments("b must not be zero")
			}
			return divideOut{Q: in.A / in.B}, nil
		}))
		transport := toolctx.TransportInMemory
		if overHTTP {
			transport = toolctx.TransportUnknown // detected
		}
		mcpsdk.Install(srv, s.chain.Middleware(), mcpsdk.WithTransport(transport))
		cl := mcp.NewClient(&mcp.Implementation{Name: "otelmw-test-client", Version: "1"}, nil)
		ctx := context.Background()
		if !overHTTP {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			require.NoError(t, err)
			cs, err := cl.Connect(ctx, ct, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
			return sdkClient{cs}
		}
		h := otelmw.ClientAddress(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		hs := httptest.NewServer(h)
		cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close(); hs.Close() })
		return sdkClient{cs}
	}
}

type goClient struct{ c *gclient.Client }

func (c goClient) call(ctx context.Context, tool string, args map[string]any, meta map[string]any) (bool, error) {
	req := gmcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if meta != nil {
		req.Params.Meta = &gmcp.Meta{AdditionalFields: meta}
	}
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return false, err
	}
	return res.IsError, nil
}

func openMCPGo(overHTTP bool) func(t *testing.T, s *server) client {
	return func(t *testing.T, s *server) client {
		srv := gserver.NewMCPServer("otelmw-test", "1", mcpgo.ServerOption(s.chain.Middleware()))
		for name, h := range s.tools() {
			require.NoError(t, mcpgo.AddTool(srv, gmcp.NewTool(name), h), "add %s", name)
		}
		var c *gclient.Client
		if overHTTP {
			hs := httptest.NewServer(otelmw.ClientAddress(gserver.NewStreamableHTTPServer(srv)))
			t.Cleanup(hs.Close)
			var err error
			c, err = gclient.NewStreamableHttpClient(hs.URL+"/mcp", gtransport.WithHTTPBasicClient(&http.Client{}))
			require.NoError(t, err)
		} else {
			var err error
			c, err = gclient.NewInProcessClient(srv)
			require.NoError(t, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, c.Start(ctx))
		init := gmcp.InitializeRequest{}
		init.Params.ClientInfo = gmcp.Implementation{Name: "otelmw-test-client", Version: "1"}
		_, err := c.Initialize(ctx, init)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return goClient{c}
	}
}
