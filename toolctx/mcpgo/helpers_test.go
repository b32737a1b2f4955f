package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// recorder collects what the server side keeps: diagnostics events and
// After records (the stand-in for audit rows).
type recorder struct {
	mu    sync.Mutex
	diags []middleware.DiagnosticEvent
	rows  []middleware.CallInfo
	reqs  []toolctx.Request
}

func (r *recorder) diag(_ context.Context, ev middleware.DiagnosticEvent) {
	r.mu.Lock()
	r.diags = append(r.diags, ev)
	r.mu.Unlock()
}

func (r *recorder) after(_ context.Context, info middleware.CallInfo) {
	r.mu.Lock()
	r.rows = append(r.rows, info)
	r.mu.Unlock()
}

// capture records the request each call carried, through the chain.
func (r *recorder) capture(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		r.mu.Lock()
		r.reqs = append(r.reqs, *req)
		r.mu.Unlock()
		return next.CallTool(ctx, req)
	})
}

func (r *recorder) snapshot() ([]middleware.DiagnosticEvent, []middleware.CallInfo, []toolctx.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]middleware.DiagnosticEvent(nil), r.diags...), append([]middleware.CallInfo(nil), r.rows...), append([]toolctx.Request(nil), r.reqs...)
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.diags, r.rows, r.reqs = nil, nil, nil
	r.mu.Unlock()
}

// guard rejects calls to the tool "guarded", as a scope check would.
func guard(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		if req.Tool == "guarded" {
			return toolctx.ErrorResult(errs.PermissionDenied("the scope tools:guarded is required"))
		}
		return next.CallTool(ctx, req)
	})
}

func (r *recorder) chain() middleware.Chain {
	return middleware.New(
		middleware.After(r.after),
		middleware.Diagnostics(r.diag),
		r.capture,
		guard,
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
}

type secretStruct struct{ Secret string }

// failure returns a failure of the given shape carrying canary, or panics
// with it.
func failure(kind int, canary string) error {
	switch kind {
	case 0:
		return errors.New("db: " + canary)
	case 1:
		return fmt.Errorf("query users: %w", errors.New(canary))
	case 2:
		return errors.Join(errors.New("first"), fmt.Errorf("second: %s", canary))
	case 3:
		return errs.NotFound("no such record").WithCause(errors.New(canary))
	case 4:
		panic(canary)
	case 5:
		panic(fmt.Errorf("wrapped panic: %w", errors.New(canary)))
	case 6:
		panic(secretStruct{Secret: canary})
	case 7:
		panic(nil)
	case 8:
		var m map[string]int
		//lint:ignore SA5000 the nil-map write is the deliberate panic under test
		m[canary]++ // runtime error: assignment to entry in nil map
	case 9:
		// A public error wrapping a raw one through %w and a join.
		return errors.Join(fmt.Errorf("ctx: %w", errs.Unavailable("try later").WithCause(errors.New(canary))))
	}
	return errors.New("unreachable " + canary)
}

// numKinds is the number of failure shapes; kinds 3 and 9 are public.
const numKinds = 10

func publicKind(kind int) bool { return kind == 3 || kind == 9 }

// canaryInValue reports whether the raw value of the shape carries the
// canary (panic(nil) and the runtime error cannot).
func canaryInValue(kind int) bool { return kind != 7 && kind != 8 }

func failArgs(req mcp.CallToolRequest) (int, string) {
	args := req.GetArguments()
	k, _ := args["kind"].(float64)
	c, _ := args["canary"].(string)
	return int(k), c
}

var failSchema = mcp.WithInputSchema[struct {
	Kind   int    `json:"kind"`
	Canary string `json:"canary"`
}]()

// newServer builds the server every end-to-end test uses: the toolmw chain
// installed first, mcp-go's input validation, native mcp-go tools and toolmw
// tools.
func newServer(t testing.TB, rec *recorder, extra ...server.ServerOption) *server.MCPServer {
	opts := append([]server.ServerOption{
		mcpgo.ServerOption(rec.chain().Middleware()),
		server.WithInputSchemaValidation(),
	}, extra...)
	return newServerWith(t, opts...)
}

// newServerWith builds newServer's server and tools with exactly opts (no
// toolmw unless opts install it).
func newServerWith(t testing.TB, opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("toolmw-test", "1.0.0", opts...)

	nativeFail := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		k, c := failArgs(req)
		return nil, failure(k, c)
	}
	for _, name := range []string{"fail_a", "fail_b", "fail_c"} {
		s.AddTool(mcp.NewTool(name, failSchema), nativeFail)
	}
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("tm_fail", failSchema), toolctx.HandlerFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			var in struct {
				Kind   int    `json:"kind"`
				Canary string `json:"canary"`
			}
			if err := json.Unmarshal(req.Arguments.JSON(), &in); err != nil {
				return toolctx.ErrorResult(err)
			}
			return toolctx.ErrorResult(failure(in.Kind, in.Canary))
		})))
	s.AddTool(mcp.NewTool("ok"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello"), nil
	})
	s.AddTool(mcp.NewTool("guarded"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("should not run"), nil
	})
	s.AddTool(mcp.NewTool("own_error"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("the date must be in the future"), nil
	})
	s.AddTool(mcp.NewTool("strict",
		mcp.WithNumber("n", mcp.Required(), mcp.Min(1)),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	s.AddTool(mcp.NewTool("rich"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return richResult(), nil
	})
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("tm_rich"), toolctx.HandlerFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult { return tmRichResult() })))
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("tm_unencodable"), toolctx.HandlerFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			return toolctx.StructuredResult(map[string]any{"ch": make(chan int)})
		})))
	s.AddTool(mcp.NewTool("slow"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, _ := req.GetArguments()["canary"].(string)
		if started, ok := slowStarted.Load(c); ok {
			close(started.(chan struct{}))
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
		return nil, errors.New("late failure " + c)
	})
	return s
}

var slowStarted sync.Map // canary -> chan struct{}

func priority(p float64) *float64 { return &p }

func richResult() *mcp.CallToolResult {
	size := int64(42)
	ann := mcp.Annotated{Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser, mcp.RoleAssistant}, Priority: priority(0.5), LastModified: "2025-01-12T15:00:58Z"}}
	return &mcp.CallToolResult{
		Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{"trace": "abc", "n": 1.0}}},
		Content: []mcp.Content{
			mcp.TextContent{Annotated: ann, Type: "text", Text: "hello", Meta: &mcp.Meta{AdditionalFields: map[string]any{"k": "v"}}},
			mcp.ImageContent{Type: "image", Data: "aGVsbG8=", MIMEType: "image/png"},
			mcp.AudioContent{Type: "audio", Data: "d29ybGQ=", MIMEType: "audio/wav", Annotated: ann},
			mcp.ResourceLink{Type: "resource_link", URI: "file:///a.txt", Name: "a", Title: "A", Description: "the a", MIMEType: "text/plain", Size: &size},
			mcp.EmbeddedResource{Type: "resource", Resource: mcp.TextResourceContents{URI: "file:///b.txt", MIMEType: "text/plain", Text: "bee", Meta: map[string]any{"m": "x"}}},
			mcp.EmbeddedResource{Type: "resource", Resource: mcp.BlobResourceContents{URI: "file:///c.bin", MIMEType: "application/octet-stream", Blob: "AAEC"}},
		},
		StructuredContent: map[string]any{"answer": 42.0, "list": []any{"x", "y"}},
	}
}

func tmRichResult() *toolctx.CallResult {
	size := int64(42)
	ann := &toolctx.Annotations{Audience: []toolctx.Role{"user", "assistant"}, Priority: priority(0.5), LastModified: "2025-01-12T15:00:58Z"}
	return &toolctx.CallResult{
		Meta: map[string]any{"trace": "abc", "n": 1.0},
		Content: []toolctx.Content{
			&toolctx.Text{Annotations: ann, Text: "hello", Meta: map[string]any{"k": "v"}},
			&toolctx.Image{Data: []byte("hello"), MIMEType: "image/png"},
			&toolctx.Audio{Data: []byte("world"), MIMEType: "audio/wav", Annotations: ann},
			&toolctx.ResourceLink{URI: "file:///a.txt", Name: "a", Title: "A", Description: "the a", MIMEType: "text/plain", Size: &size},
			&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///b.txt", MIMEType: "text/plain", Text: "bee", Meta: map[string]any{"m": "x"}}},
			&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///c.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}},
		},
		StructuredContent: map[string]any{"answer": 42.0, "list": []any{"x", "y"}},
	}
}

// wire is a client on one transport with the raw bytes it received.
type wire struct {
	name   string
	client *client.Client
	mu     sync.Mutex
	raw    bytes.Buffer
	// body is raw without the HTTP response headers: the JSON-RPC messages
	// as the client read them.
	body bytes.Buffer
}

func (w *wire) record(b []byte) {
	w.mu.Lock()
	w.raw.Write(b)
	w.mu.Unlock()
}

func (w *wire) recordBody(b []byte) {
	w.mu.Lock()
	w.raw.Write(b)
	w.body.Write(b)
	w.mu.Unlock()
}

func (w *wire) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.raw.Bytes())
}

func (w *wire) bodyBytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.body.Bytes())
}

// captureTransport records the JSON-RPC responses of an in-process
// transport, marshalled as they would be on a wire.
type captureTransport struct {
	transport.Interface
	w *wire
}

func (c *captureTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := c.Interface.SendRequest(ctx, req)
	if resp != nil {
		b, merr := json.Marshal(resp)
		if merr != nil {
			return nil, merr
		}
		c.w.recordBody(b)
	}
	if err != nil {
		c.w.recordBody([]byte(err.Error()))
	}
	return resp, err
}

// captureRT records every byte of every HTTP response the client reads.
type captureRT struct {
	base http.RoundTripper
	w    *wire
}

func (c *captureRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	var hdr bytes.Buffer
	_ = resp.Header.Write(&hdr)
	c.w.record(hdr.Bytes())
	resp.Body = &teeBody{rc: resp.Body, w: c.w}
	return resp, nil
}

type teeBody struct {
	rc io.ReadCloser
	w  *wire
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if n > 0 {
		t.w.recordBody(p[:n])
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

func initialize(t testing.TB, c *client.Client) {
	// Start with a context that outlives initialize: the SSE transport
	// keeps its event stream on it.
	require.NoError(t, c.Start(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "toolmw-test", Version: "1"}
	_, err := c.Initialize(ctx, req)
	require.NoError(t, err)
}

func inProcessWire(t testing.TB, s *server.MCPServer) *wire {
	w := &wire{name: "in-process"}
	w.client = client.NewClient(&captureTransport{Interface: transport.NewInProcessTransport(s), w: w})
	initialize(t, w.client)
	t.Cleanup(func() { _ = w.client.Close() })
	return w
}

func httpWire(t testing.TB, s *server.MCPServer, wrap func(http.Handler) http.Handler, opts ...server.StreamableHTTPOption) *wire {
	var h http.Handler = server.NewStreamableHTTPServer(s, opts...)
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	w := &wire{name: "streamable-http"}
	hc := &http.Client{Transport: &captureRT{base: http.DefaultTransport, w: w}}
	c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", transport.WithHTTPBasicClient(hc))
	require.NoError(t, err)
	w.client = c
	initialize(t, c)
	t.Cleanup(func() { _ = c.Close() })
	return w
}

// wires returns a client per mcp-go transport, each on its own server.
func wires(t *testing.T) map[string]func(*testing.T, *recorder) *wire {
	return map[string]func(*testing.T, *recorder) *wire{
		"in-process":      func(t *testing.T, rec *recorder) *wire { return inProcessWire(t, newServer(t, rec)) },
		"streamable-http": func(t *testing.T, rec *recorder) *wire { return httpWire(t, newServer(t, rec), nil) },
	}
}

// everyWire is wires with mcp-go's SSE and stdio transports too.
func everyWire(t *testing.T) map[string]func(*testing.T, *recorder) *wire {
	m := wires(t)
	m["sse"] = func(t *testing.T, rec *recorder) *wire { return sseWire(t, newServer(t, rec)) }
	m["stdio"] = func(t *testing.T, rec *recorder) *wire { return stdioWire(t, newServer(t, rec)) }
	return m
}

func call(t testing.TB, w *wire, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	if args != nil {
		req.Params.Arguments = args
	}
	return w.client.CallTool(ctx, req)
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func errorMeta(r *mcp.CallToolResult) map[string]any {
	if r.Meta == nil {
		return nil
	}
	m, _ := r.Meta.AdditionalFields[toolctx.ErrorMetaKey].(map[string]any)
	return m
}

// sseWire serves s with mcp-go's SSE server on 127.0.0.1 and records every
// byte of the SSE stream and of the POST responses.
func sseWire(t testing.TB, s *server.MCPServer) *wire {
	sse := server.NewSSEServer(s)
	ts := httptest.NewServer(sse)
	t.Cleanup(ts.Close)
	t.Cleanup(sse.CloseSessions)
	w := &wire{name: "sse"}
	hc := &http.Client{Transport: &captureRT{base: http.DefaultTransport, w: w}}
	c, err := client.NewSSEMCPClient(ts.URL+"/sse", transport.WithHTTPClient(hc))
	require.NoError(t, err)
	w.client = c
	initialize(t, c)
	t.Cleanup(func() { _ = c.Close() })
	return w
}

// teeReader records what the stdio client reads from the server.
type teeReader struct {
	r io.Reader
	w *wire
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.w.recordBody(p[:n])
	}
	return n, err
}

// stdioWire serves s with mcp-go's stdio server over in-memory pipes and
// records every byte the client reads. mcp-go's stdio session is one value
// per process: stdio wires must not be used by parallel tests.
func stdioWire(t testing.TB, s *server.MCPServer, opts ...server.StdioOption) *wire {
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ss := server.NewStdioServer(s)
	for _, o := range opts {
		o(ss)
	}
	ss.SetErrorLogger(log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ss.Listen(ctx, serverIn, serverOut) }()
	w := &wire{name: "stdio"}
	w.client = client.NewClient(transport.NewIO(&teeReader{r: clientIn, w: w}, clientOut, io.NopCloser(strings.NewReader(""))))
	t.Cleanup(func() {
		_ = w.client.Close()
		cancel()
		_ = serverIn.Close()
		_ = serverOut.Close()
		_ = clientIn.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the stdio server did not stop")
		}
	})
	initialize(t, w.client)
	return w
}

// allWires makes a client of each mcp-go transport for a server built by mk
// (one server per transport).
func allWires(t *testing.T, mk func(t *testing.T) *server.MCPServer) []*wire {
	return []*wire{
		inProcessWire(t, mk(t)),
		httpWire(t, mk(t), nil),
		sseWire(t, mk(t)),
		stdioWire(t, mk(t)),
	}
}
