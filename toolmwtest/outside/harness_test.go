package outside

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
	"github.com/toolmw/toolmw/toolmwtest/mcpgotest"
)

// The SDKs and transports every check here runs on: go-sdk and mcp-go,
// each over stdio (pipes in the process, the stdio codec), streamable
// HTTP stateful and stateless, and SSE.
var (
	sdks       = []string{"go-sdk", "mcp-go"}
	transports = []string{"stdio", "http", "http-stateless", "sse"}
)

// metaIdentity is the _meta key the checks' clients name their caller
// under ({"subject": ..., "scopes": [...]}); identify turns it into
// Request.Identity, as an authentication layer would, on every transport
// alike. A call without the key is anonymous.
const metaIdentity = "test.outside/identity"

func identify(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		raw, ok := req.Meta[metaIdentity].(map[string]any)
		if !ok {
			return next.CallTool(ctx, req)
		}
		id := &toolctx.Identity{}
		id.Subject, _ = raw["subject"].(string)
		if sc, ok := raw["scopes"].([]any); ok {
			for _, s := range sc {
				str, _ := s.(string)
				id.Scopes = append(id.Scopes, str)
			}
		}
		c := *req
		c.Identity = id
		return next.CallTool(ctx, &c)
	})
}

// withIdentity is the _meta naming a caller.
func withIdentity(subject string, scopes ...string) map[string]any {
	sc := make([]any, len(scopes))
	for i, s := range scopes {
		sc[i] = s
	}
	return map[string]any{metaIdentity: map[string]any{"subject": subject, "scopes": sc}}
}

// rows keeps the audit rows of a server.
type rows struct {
	mu  sync.Mutex
	all []audit.Record
}

func (r *rows) emit(_ context.Context, rec audit.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rec)
}

// take returns and forgets the rows kept so far.
func (r *rows) take() []audit.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.all
	r.all = nil
	return out
}

// tool is one tool of a server under check: its input schema (an open
// object when empty) and its handler.
type tool struct {
	schema string
	h      toolctx.Handler
}

// answer is what a client received for one call.
type answer struct {
	// Wire is every byte the client received during the call.
	Wire []byte
	// Result is the client's result re-encoded as JSON (nil for a
	// protocol error).
	Result []byte
	// Err is the client's error (a protocol error).
	Err error
}

// decoded reads the answer's result: isError, the texts of its content
// blocks, its content's length.
func (a answer) decoded(t testing.TB) (isError bool, texts []string, blocks int) {
	t.Helper()
	require.NoError(t, a.Err, "a result, not a protocol error")
	var v struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(a.Result, &v), "decode %s", a.Result)
	for _, c := range v.Content {
		texts = append(texts, c.Text)
	}
	return v.IsError, texts, len(v.Content)
}

// conn is a client connected to a server under check.
type conn struct {
	name string
	rec  *recorder
	call func(ctx context.Context, name string, args json.RawMessage, meta map[string]any) (json.RawMessage, error)
	stop func()
	// again connects another client to the same server (its own session),
	// which the test stops.
	again func() *conn
}

// Call calls a tool with args (JSON) and meta, within a minute.
func (c *conn) Call(t testing.TB, name, args string, meta map[string]any) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := c.rec.Len()
	res, err := c.call(ctx, name, json.RawMessage(args), meta)
	return answer{Wire: c.rec.Since(before), Result: res, Err: err}
}

// recorder keeps every byte a client received.
type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Len()
}

func (r *recorder) Since(n int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes()[n:])
}

type teeBody struct {
	io.Reader
	io.Closer
}

type recordingRT struct{ rec *recorder }

func (rt recordingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = teeBody{io.TeeReader(resp.Body, rt.rec), resp.Body}
	return resp, nil
}

// serve starts a server of sdk with tools behind chain (installed with
// opts, go-sdk's or mcp-go's) over tr and connects that SDK's client; the
// server and client stop at the end of the test.
func serve(t testing.TB, sdk, tr string, chain middleware.Chain, tools map[string]tool) *conn {
	t.Helper()
	c := &conn{name: sdk + " " + tr, rec: &recorder{}}
	switch sdk {
	case "go-sdk":
		serveGoSDK(t, c, tr, chain, tools)
	case "mcp-go":
		serveMCPGo(t, c, tr, chain, tools)
	default:
		t.Fatalf("no SDK %s", sdk)
	}
	t.Cleanup(func() { c.stop() })
	return c
}

// another connects another client to c's server, stopped at the end of
// the test.
func (c *conn) another(t testing.TB) *conn {
	t.Helper()
	require.NotNil(t, c.again, "%s: no second client", c.name)
	c2 := c.again()
	t.Cleanup(func() { c2.stop() })
	return c2
}

func schemaOf(tl tool) json.RawMessage {
	if tl.schema == "" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return json.RawMessage(tl.schema)
}

func serveGoSDK(t testing.TB, c *conn, tr string, chain middleware.Chain, tools map[string]tool) {
	s := mcp.NewServer(&mcp.Implementation{Name: "outside", Version: "0"}, nil)
	for name, tl := range tools {
		require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: name, InputSchema: schemaOf(tl)}, tl.h), "register %s", name)
	}
	mcpsdk.Install(s, chain.Middleware())
	var srv *httptest.Server
	if tr != "stdio" {
		get := func(*http.Request) *mcp.Server { return s }
		var h http.Handler = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: tr == "http-stateless"})
		if tr == "sse" {
			h = mcp.NewSSEHandler(get, nil)
		}
		srv = httptest.NewServer(h)
	}
	var dial func(c *conn)
	dial = func(c *conn) {
		client := mcp.NewClient(&mcp.Implementation{Name: "outside-client", Version: "0"}, nil)
		ctx := context.Background()
		var cs *mcp.ClientSession
		var err error
		if tr == "stdio" {
			c2sR, c2sW := io.Pipe()
			s2cR, s2cW := io.Pipe()
			ss, serr := s.Connect(ctx, &mcp.IOTransport{Reader: c2sR, Writer: s2cW}, nil)
			require.NoError(t, serr)
			cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(s2cR, c.rec)), Writer: c2sW}, nil)
			require.NoError(t, err)
			c.stop = func() { _ = cs.Close(); _ = ss.Wait() }
		} else {
			hc := &http.Client{Transport: recordingRT{c.rec}}
			var ct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: -1}
			if tr == "sse" {
				ct = &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: hc}
			}
			cs, err = client.Connect(ctx, ct, nil)
			require.NoError(t, err)
			c.stop = func() { _ = cs.Close() }
		}
		c.call = func(ctx context.Context, name string, args json.RawMessage, meta map[string]any) (json.RawMessage, error) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		}
		c.again = func() *conn {
			c2 := &conn{name: c.name, rec: &recorder{}}
			dial(c2)
			return c2
		}
	}
	dial(c)
	if srv != nil {
		t.Cleanup(func() {
			srv.CloseClientConnections()
			srv.Close()
			for ss := range s.Sessions() {
				_ = ss.Close()
			}
		})
	}
}

func serveMCPGo(t testing.TB, c *conn, tr string, chain middleware.Chain, tools map[string]tool) {
	s := mcpgoserver.NewMCPServer("outside", "0", mcpgo.ServerOption(chain.Middleware()), mcpgoserver.WithInputSchemaValidation())
	for name, tl := range tools {
		require.NoError(t, mcpgo.AddTool(s, mcpgomcp.NewToolWithRawSchema(name, "", schemaOf(tl)), tl.h), "register %s", name)
	}
	var url string
	switch tr {
	case "stdio":
	case "http", "http-stateless":
		srv := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(tr == "http-stateless")))
		t.Cleanup(srv.Close)
		url = srv.URL + "/mcp"
	case "sse":
		sse := mcpgoserver.NewSSEServer(s)
		srv := httptest.NewServer(sse)
		t.Cleanup(func() { _ = sse.Shutdown(context.Background()); srv.Close() })
		url = srv.URL + "/sse"
	default:
		t.Fatalf("no transport %s", tr)
	}
	var dial func(c *conn)
	dial = func(c *conn) {
		hc := &http.Client{Transport: recordingRT{c.rec}}
		var (
			cl   *mcpgoclient.Client
			err  error
			stop = func() {}
		)
		switch tr {
		case "stdio":
			cl, stop = mcpgotest.StdioClient(s, c.rec)
		case "sse":
			cl, err = mcpgoclient.NewSSEMCPClient(url, mcpgotransport.WithHTTPClient(hc))
		default:
			cl, err = mcpgoclient.NewStreamableHttpClient(url, mcpgotransport.WithHTTPBasicClient(hc))
		}
		require.NoError(t, err)
		require.NoError(t, cl.Start(context.Background()), "start")
		ictx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ireq := mcpgomcp.InitializeRequest{}
		ireq.Params.ClientInfo = mcpgomcp.Implementation{Name: "outside-client", Version: "0"}
		ireq.Params.ProtocolVersion = mcpgomcp.LATEST_PROTOCOL_VERSION
		_, err = cl.Initialize(ictx, ireq)
		require.NoError(t, err, "initialize")
		c.stop = func() { _ = cl.Close(); stop() }
		c.call = func(ctx context.Context, name string, args json.RawMessage, meta map[string]any) (json.RawMessage, error) {
			req := mcpgomcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = name, args
			if meta != nil {
				req.Params.Meta = &mcpgomcp.Meta{AdditionalFields: meta}
			}
			res, err := cl.CallTool(ctx, req)
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		}
		if tr == "stdio" {
			return // mcp-go's stdio server serves one client per MCPServer
		}
		c.again = func() *conn {
			c2 := &conn{name: c.name, rec: &recorder{}}
			dial(c2)
			return c2
		}
	}
	dial(c)
}

// each runs fn on every SDK and transport, each with a fresh server.
func each(t *testing.T, fn func(t *testing.T, sdk, tr string)) {
	for _, sdk := range sdks {
		for _, tr := range transports {
			t.Run(fmt.Sprintf("%s/%s", sdk, tr), func(t *testing.T) { fn(t, sdk, tr) })
		}
	}
}

// counterBy reads the int64 counter name from reader as the value of its
// attribute key -> count (otelmw's toolmw.cache.lookups by result,
// toolmw.guard.would_reject by guard).
func counterBy(t testing.TB, reader *sdkmetric.ManualReader, name, key string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := p.Attributes.Value(attribute.Key(key))
				got[v.AsString()] += p.Value
			}
		}
	}
	return got
}

// meteredOtel is otelmw's interceptor on a meter provider of its own, shut
// down with the test, and the reader of its metrics.
func meteredOtel(t testing.TB) (toolctx.Middleware, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	otel, err := otelmw.New(otelmw.WithMeterProvider(mp))
	require.NoError(t, err)
	return otel, reader
}
