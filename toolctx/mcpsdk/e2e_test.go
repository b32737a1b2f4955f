package mcpsdk_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// capture holds every byte the client received.
type capture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *capture) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// teeReadCloser copies what is read into a capture.
type teeReadCloser struct {
	io.Reader
	c io.Closer
}

func (t teeReadCloser) Close() error { return t.c.Close() }

func tee(rc io.ReadCloser, c *capture) io.ReadCloser {
	return teeReadCloser{Reader: io.TeeReader(rc, c), c: rc}
}

// captureRT records every response body byte.
type captureRT struct {
	base http.RoundTripper
	c    *capture
}

func (rt captureRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	for k, vs := range resp.Header {
		fmt.Fprintf(rt.c, "%s: %s\n", k, strings.Join(vs, ","))
	}
	resp.Body = tee(resp.Body, rt.c)
	return resp, nil
}

// fixture is a connected client and the server's hook records.
type fixture struct {
	name      string
	transport toolctx.Transport
	session   *mcp.ClientSession
	received  *capture
	records   func() []record
	changed   func() <-chan struct{} // closed at the next record; nil: poll records
	heard     *heard                 // the notifications the client received
}

type transportKind struct {
	name      string
	transport toolctx.Transport
	connect   func(t testing.TB) *fixture
}

var transports = []transportKind{
	{"in-memory", toolctx.TransportInMemory, connectInMemory},
	{"http-stateful", toolctx.TransportStreamableHTTP, func(t testing.TB) *fixture { return connectHTTP(t, false) }},
	{"http-stateless", toolctx.TransportStreamableHTTP, func(t testing.TB) *fixture { return connectHTTP(t, true) }},
	{"sse", toolctx.TransportSSE, connectSSE},
	{"stdio", toolctx.TransportStdio, connectStdio},
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, nil)
}

// connectInMemory connects over a net.Pipe with newline-delimited JSON:
// exactly what mcp.NewInMemoryTransports builds, with the client's reads
// captured.
func connectInMemory(t testing.TB) *fixture {
	rec := &recorder{}
	s := buildServer(rec, toolctx.TransportInMemory)
	c1, c2 := net.Pipe()
	cap := &capture{}
	ctx := context.Background()
	ss, err := s.Connect(ctx, &mcp.IOTransport{Reader: c1, Writer: c1}, nil)
	require.NoError(t, err)
	hd := &heard{}
	cs, err := hd.client().Connect(ctx, &mcp.IOTransport{Reader: tee(c2, cap), Writer: c2}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return &fixture{name: "in-memory", transport: toolctx.TransportInMemory, session: cs, received: cap, records: rec.snapshot, changed: rec.changed, heard: hd}
}

func connectHTTP(t testing.TB, stateless bool) *fixture {
	rec := &recorder{}
	s := buildServer(rec, toolctx.TransportUnknown)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	srv := httptest.NewServer(h)
	cap := &capture{}
	hd := &heard{}
	cs, err := hd.client().Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   srv.URL,
		HTTPClient: &http.Client{Transport: captureRT{base: http.DefaultTransport, c: cap}},
		MaxRetries: -1,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); srv.Close() })
	name := "http-stateful"
	if stateless {
		name = "http-stateless"
	}
	return &fixture{name: name, transport: toolctx.TransportStreamableHTTP, session: cs, received: cap, records: rec.snapshot, changed: rec.changed, heard: hd}
}

// connectSSE serves over the SDK's SSE transport (the 2024-11-05 HTTP
// transport), with every response body byte captured.
func connectSSE(t testing.TB) *fixture {
	rec := &recorder{}
	// No WithTransport: mcpsdk.SSE tells the adapter.
	s := buildServer(rec, toolctx.TransportUnknown)
	srv := httptest.NewServer(mcpsdk.SSE(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	cap := &capture{}
	hd := &heard{}
	cs, err := hd.client().Connect(context.Background(), &mcp.SSEClientTransport{
		Endpoint:   srv.URL,
		HTTPClient: &http.Client{Transport: captureRT{base: http.DefaultTransport, c: cap}},
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); srv.CloseClientConnections(); srv.Close() })
	return &fixture{name: "sse", transport: toolctx.TransportSSE, session: cs, received: cap, records: rec.snapshot, changed: rec.changed, heard: hd}
}

// connectStdio runs the server as a subprocess (this test binary, re-executed)
// and reads its stdout through a capture.
func connectStdio(t testing.TB) *fixture {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"="+path)
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	cap := &capture{}
	hd := &heard{}
	cs, err := hd.client().Connect(context.Background(), &mcp.IOTransport{Reader: tee(stdout, cap), Writer: stdin}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	records := func() []record {
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		var out []record
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var r record
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				out = append(out, r)
			}
		}
		return out
	}
	return &fixture{name: "stdio", transport: toolctx.TransportStdio, session: cs, received: cap, records: records, heard: hd}
}

// waitRecords polls until pred holds for the records, or fails.
func (f *fixture) waitRecords(t testing.TB, pred func([]record) bool) []record {
	t.Helper()
	recs, ok := f.awaitRecords(pred)
	if !ok {
		t.Fatalf("%s: records never matched; have %d: %+v", f.name, len(recs), tail(recs, 10))
	}
	return recs
}

// awaitRecords waits until pred holds of the records, woken by each new
// record (in memory) or polling a server process's file, for a minute at
// most (a generous bound, for a loaded machine); ok is false then.
func (f *fixture) awaitRecords(pred func([]record) bool) (recs []record, ok bool) {
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for {
		var next <-chan struct{}
		if f.changed != nil {
			next = f.changed() // before reading: no record slips between
		}
		recs = f.records()
		if pred(recs) {
			return recs, true
		}
		var poll <-chan time.Time
		if next == nil {
			poll = time.After(5 * time.Millisecond)
		}
		select {
		case <-next:
		case <-poll:
		case <-deadline.C:
			return recs, false
		}
	}
}

func tail(r []record, n int) []record {
	if len(r) > n {
		return r[len(r)-n:]
	}
	return r
}

func forCase(recs []record, kind string, c int) []record {
	var out []record
	for _, r := range recs {
		if r.Kind == kind && r.Case == c {
			out = append(out, r)
		}
	}
	return out
}

func (f *fixture) call(t testing.TB, ctx context.Context, tool string, args any, caseID int) (*mcp.CallToolResult, error) {
	t.Helper()
	return f.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{"case": caseID}})
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func errorMeta(t testing.TB, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := r.Meta[toolctx.ErrorMetaKey].(map[string]any)
	require.Truef(t, ok, "no %s in _meta: %v", toolctx.ErrorMetaKey, r.Meta)
	return m
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestBehaviourTable checks DESIGN.md's table, row by row, on every
// transport.
func TestBehaviourTable(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			t.Parallel()
			f := tk.connect(t)
			ctx := context.Background()
			caseID := 0
			next := func() int { caseID++; return caseID }

			t.Run("success is lossless, every content kind", func(t *testing.T) {
				want := allContent()
				for _, tool := range []string{"all_content", "tm_all_content"} {
					res, err := f.call(t, ctx, tool, map[string]any{}, next())
					require.NoError(t, err)
					require.False(t, res.IsError, tool)
					require.JSONEq(t, jsonOf(t, want.Content), jsonOf(t, res.Content), tool)
					require.JSONEq(t, jsonOf(t, want.StructuredContent), jsonOf(t, res.StructuredContent), tool)
					require.Equal(t, "abc", res.Meta["trace"], tool)
					require.Equal(t, want.Meta["nested"], res.Meta["nested"], tool)
					require.NotContains(t, res.Meta, toolctx.ErrorMetaKey)
				}
				res, err := f.call(t, ctx, "typed", map[string]any{"n": 21}, next())
				require.NoError(t, err)
				require.JSONEq(t, `{"value":"42"}`, jsonOf(t, res.StructuredContent))
				res, err = f.call(t, ctx, "tm_typed", map[string]any{"n": 4}, next())
				require.NoError(t, err)
				require.JSONEq(t, `{"value":"8"}`, jsonOf(t, res.StructuredContent))
			})

			t.Run("request details", func(t *testing.T) {
				res, err := f.call(t, ctx, "whoami", map[string]any{}, next())
				require.NoError(t, err)
				var got map[string]any
				require.NoError(t, json.Unmarshal([]byte(text(res)), &got))
				require.Equal(t, string(tk.transport), got["transport"])
				require.NotEmpty(t, got["call_id"])
				require.Equal(t, map[string]any{"case": float64(caseID)}, got["own_meta"], "hooks see the client's own _meta keys")
				meta, _ := got["meta"].(map[string]any)
				require.Equal(t, float64(caseID), meta["case"], "the handler sees the _meta as sent")
				if tk.name != "http-stateful" && tk.name != "sse" { // a stateful session sends the protocol's keys at initialize only
					require.Equal(t, "2026-07-28", meta[toolctx.ReservedMetaPrefix+"protocolVersion"], "the protocol's keys included")
				}
				require.Equal(t, tk.transport == toolctx.TransportStreamableHTTP, got["has_header"])
				if tk.name == "http-stateful" || tk.name == "sse" {
					require.NotEmpty(t, got["session"], "the handler sees the session id")
					c := caseID
					recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
					a := forCase(recs, "after", c)[0]
					require.Equal(t, string(tk.transport), a.Transport, "the After row names the transport")
					require.Equal(t, got["session"], a.Session, "the After row has the session id the handler saw")
					if tk.name == "sse" {
						require.Contains(t, string(f.received.bytes()), fmt.Sprintf("sessionid=%s", got["session"]), "the session id is the one the client was given")
					}
				}
			})

			t.Run("invalid arguments are public feedback", func(t *testing.T) {
				for _, tool := range []string{"typed", "tm_typed"} {
					c := next()
					res, err := f.call(t, ctx, tool, map[string]any{"n": "not a number"}, c)
					require.NoError(t, err)
					require.True(t, res.IsError)
					require.Equal(t, string(errs.CodeInvalidArguments), errorMeta(t, res)["code"], tool)
					require.Contains(t, text(res), "arguments", tool)
					require.NotEqual(t, errs.GenericMessage, text(res))
					recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
					a := forCase(recs, "after", c)[0]
					require.Equal(t, string(errs.CodeInvalidArguments), a.Code)
					require.False(t, a.Scrubbed)
					require.Empty(t, forCase(recs, "diag", c))
				}
				require.Contains(t, string(f.received.bytes()), `"io.github.toolmw/error":{"code":"invalid_arguments"`,
					"the wire name of the error _meta key, which clients read")
			})

			t.Run("explicit public error: message and detail, never the cause", func(t *testing.T) {
				for _, tool := range []string{"sdk_typed_fail", "sdk_raw_fail", "tm_fail"} {
					c := next()
					res, err := f.call(t, ctx, tool, failArgs{Shape: "public", ID: c}, c)
					require.NoError(t, err)
					require.True(t, res.IsError)
					require.Equal(t, "no such invoice", text(res))
					em := errorMeta(t, res)
					require.Equal(t, "not_found", em["code"])
					require.Equal(t, map[string]any{"id": 7.0}, em["detail"])
					recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
					require.Empty(t, forCase(recs, "diag", c))
				}
				c := next()
				res, err := f.call(t, ctx, "own_error", map[string]any{}, c)
				require.NoError(t, err)
				require.True(t, res.IsError)
				require.Equal(t, "the invoice is locked", text(res))
				require.Equal(t, string(errs.CodeToolError), errorMeta(t, res)["code"])
			})

			t.Run("raw error: generic message, diagnostics get the raw error", func(t *testing.T) {
				for _, tool := range []string{"sdk_typed_fail", "sdk_raw_fail", "tm_fail", "guard_fail", "sdkmw_fail"} {
					c := next()
					res, err := f.call(t, ctx, tool, failArgs{Shape: "wrapped", ID: c}, c)
					require.NoError(t, err, tool)
					require.True(t, res.IsError, tool)
					require.Equal(t, errs.GenericMessage, text(res), tool)
					require.Equal(t, "internal", errorMeta(t, res)["code"])
					recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "diag", c)) == 1 && len(forCase(r, "after", c)) == 1 })
					require.Contains(t, forCase(recs, "diag", c)[0].Raw, secretFor(c), tool)
					require.Contains(t, forCase(recs, "after", c)[0].Raw, secretFor(c), tool)
				}
			})

			t.Run("panic: generic, server keeps running, diagnostics get the stack", func(t *testing.T) {
				for _, tool := range []string{"sdk_typed_fail", "sdk_raw_fail", "tm_fail"} {
					c := next()
					res, err := f.call(t, ctx, tool, failArgs{Shape: "panic_error", ID: c}, c)
					require.NoError(t, err, tool)
					require.Equal(t, errs.GenericMessage, text(res))
					recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "diag", c)) == 1 && len(forCase(r, "after", c)) == 1 })
					d := forCase(recs, "diag", c)[0]
					require.True(t, d.Stack)
					require.Contains(t, d.Raw, secretFor(c))
					require.Contains(t, forCase(recs, "after", c)[0].Raw, secretFor(c))
					res, err = f.call(t, ctx, "typed", map[string]any{"n": 1}, next())
					require.NoError(t, err)
					require.False(t, res.IsError)
				}
			})

			t.Run("output schema failure: generic", func(t *testing.T) {
				c := next()
				res, err := f.call(t, ctx, "sdk_output_fail", failArgs{ID: c}, c)
				require.NoError(t, err)
				require.Equal(t, errs.GenericMessage, text(res))
				recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "diag", c)) == 1 })
				require.Contains(t, forCase(recs, "diag", c)[0].Raw, "validating tool output")
			})

			t.Run("unknown tool: the SDK's protocol error", func(t *testing.T) {
				c := next()
				_, err := f.call(t, ctx, "no_such_tool", map[string]any{}, c)
				require.Error(t, err)
				require.Contains(t, err.Error(), `unknown tool "no_such_tool"`)
				recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
				a := forCase(recs, "after", c)[0]
				require.Equal(t, string(errs.CodeUnknownTool), a.Code)
				require.False(t, a.Scrubbed)
				require.Empty(t, a.Raw)
				require.Empty(t, forCase(recs, "diag", c))
			})

			t.Run("deadline: public timeout", func(t *testing.T) {
				c := next()
				res, err := f.call(t, ctx, "slow", map[string]any{}, c)
				require.NoError(t, err)
				require.True(t, res.IsError)
				require.Equal(t, string(errs.CodeTimeout), errorMeta(t, res)["code"])
				require.Contains(t, text(res), "timed out")
				recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
				require.Empty(t, forCase(recs, "diag", c))
			})

			t.Run("cancellation: no late response, no diagnostics", func(t *testing.T) {
				c := next()
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				go func() {
					// Cancel once the handler runs: sooner, the client
					// might not have sent the call at all.
					f.awaitRecords(func(r []record) bool { return len(forCase(r, "entered", c)) == 1 })
					cancel()
				}()
				wait := time.Minute.Milliseconds() // the cancellation ends it
				if tk.name == "http-stateless" {
					wait = 200 // it runs to its end
				}
				_, err := f.call(t, cctx, "block", map[string]any{"id": c, "wait_ms": wait}, c)
				require.Error(t, err)
				require.True(t, errors.Is(err, context.Canceled), err)
				recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", c)) == 1 })
				if tk.name != "http-stateless" {
					require.Equal(t, string(errs.CodeCanceled), forCase(recs, "after", c)[0].Code)
				} else {
					// What the README's transport table says.
					require.False(t, forCase(recs, "after", c)[0].Failed, "on stateless HTTP the cancellation does not reach the call: it runs to its end")
				}
				// On stateless HTTP the SDK does not cancel the handler's
				// context when the client goes away: the handler runs to
				// its end and its response goes to a closed connection.
				// The session still works, and nothing late arrived.
				res, err := f.call(t, ctx, "typed", map[string]any{"n": 1}, next())
				require.NoError(t, err)
				require.False(t, res.IsError)
				time.Sleep(50 * time.Millisecond)
				require.NotContains(t, string(f.received.bytes()), "LATE-CONTENT")
				require.Empty(t, forCase(f.records(), "diag", c))
			})

			require.NotContains(t, string(f.received.bytes()), canary, "a canary reached the client")
		})
	}
}
