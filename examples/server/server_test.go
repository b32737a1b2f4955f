package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/examples/server/stack"
	"github.com/toolmw/toolmw/toolctx"
)

// The binaries under test, built once in TestMain.
var serverBin, auditBin, clientBin string

// binDirEnv names a directory holding the three binaries (server, audit,
// client) built already from this tree: bench/run builds them once, with
// the rest of its build, and runs BenchmarkDurability on them (a test
// binary built them itself in 7 s of go build at each of its runs, when
// bench/run ran it once per count).
const binDirEnv = "TOOLMW_TEST_BIN_DIR"

func TestMain(m *testing.M) {
	isolateEnv()
	dir, built, err := binaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "server")
	auditBin = filepath.Join(dir, "audit")
	clientBin = filepath.Join(dir, "client")
	// No goroutine of a client, a transport or a subprocess's pipes may
	// outlive the tests; a directory of binaries built here goes either way.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if built {
			os.RemoveAll(dir)
		}
		os.Exit(code)
	}))
}

// binaries returns the directory of the server, audit and client binaries:
// $TOOLMW_TEST_BIN_DIR when set (each binary checked to be there), or a
// new temporary directory they are built into (built is true).
func binaries() (dir string, built bool, err error) {
	names := map[string]string{"server": ".", "audit": "../audit", "client": "../client"}
	if dir = os.Getenv(binDirEnv); dir != "" {
		for name := range names {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
				return "", false, fmt.Errorf("%s=%s: no %s binary there (build it with go build -o %s/%s ./examples/%s)",
					binDirEnv, dir, name, dir, name, name)
			}
		}
		return dir, false, nil
	}
	if dir, err = os.MkdirTemp("", "toolmw-examples-server"); err != nil {
		return "", false, err
	}
	for name, pkg := range names {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return "", false, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return dir, true, nil
}

func TestBinDirMustHoldTheBinaries(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(binDirEnv, empty)
	_, built, err := binaries()
	require.Error(t, err, "a directory without the binaries is refused, not used")
	assert.ErrorContains(t, err, binDirEnv+"="+empty+": no ", "the error names the variable, the directory and the binary missing")
	assert.False(t, built)
	t.Setenv(binDirEnv, filepath.Dir(serverBin))
	dir, built, err := binaries()
	require.NoError(t, err, "the directory TestMain used holds all three")
	assert.Equal(t, filepath.Dir(serverBin), dir)
	assert.False(t, built, "a given directory is used, not built into (nor removed at the end)")
}

// isolateEnv removes from the tests' environment what the demo, the
// audit tool and the client would read from it: TOOLMW_AUDIT_POSTGRES
// (which would make every server the tests start write to that
// PostgreSQL), any other TOOLMW_ variable but the tests' own
// (TOOLMW_TEST_*, TOOLMW_LOAD_TEST), and OpenTelemetry's OTEL_ variables.
// The programs run in process and as subprocesses (which inherit it), so
// each test passes exactly what it needs, as flags.
func isolateEnv() {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		own := strings.HasPrefix(k, "TOOLMW_TEST_") || k == LoadEnv
		if (strings.HasPrefix(k, "TOOLMW_") && !own) || strings.HasPrefix(k, "OTEL_") {
			os.Unsetenv(k)
		}
	}
}

// The strings that must never reach a client: the backend's connection
// string (and its password), the panic value's secret, a stack, the private
// cause of the public not-found error.
var secrets = []string{stack.FakeDSN, "hunter2", stack.PanicSecret, "goroutine ", "panic:", "orders_v2", "nil map"}

const testSlowTimeout = time.Second

// capture records every byte the client received over HTTP.
type capture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// captureRT is the client's transport: it copies every response byte to c
// and, while delayPOST is set, hands POST responses to the client that much
// later, as a slow network would.
type captureRT struct {
	c         *capture
	delayPOST *atomic.Int64 // nanoseconds; nil or 0: no delay
}

func (rt captureRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if rt.delayPOST != nil && r.Method == http.MethodPost {
		time.Sleep(time.Duration(rt.delayPOST.Load()))
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, rt.c), resp.Body}
	return resp, nil
}

// process is the server running as a subprocess.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr *capture
	done           chan struct{}
}

func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("the server did not exit; stderr:\n%s", p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

func startServer(t testing.TB, args ...string) *process {
	t.Helper()
	cmd := exec.Command(serverBin, args...)
	cmd.Dir = t.TempDir()
	p := &process{cmd: cmd, stdout: &capture{}, stderr: &capture{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

var urlRE = regexp.MustCompile(`at (http://\S+/mcp)`)

// serverURL waits for the banner and returns the URL it prints.
func serverURL(t testing.TB, p *process) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if out := p.stdout.String(); strings.Contains(out, "Ctrl-C") {
			m := urlRE.FindStringSubmatch(out)
			require.NotNil(t, m, "no URL in the banner: %q", out)
			return m[1]
		}
		select {
		case <-p.done:
			t.Fatalf("the server exited early: %s", p.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no URL in the banner; stdout: %q stderr: %q", p.stdout, p.stderr)
	return ""
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
}

// callArgs is call with arguments of any JSON shape (json.RawMessage too).
func callArgs(t *testing.T, cs *mcp.ClientSession, tool string, args any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
}

func text(res *mcp.CallToolResult) string {
	var s []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s = append(s, tc.Text)
		}
	}
	return strings.Join(s, "\n")
}

func errorMeta(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.Meta[toolctx.ErrorMetaKey].(map[string]any)
	require.True(t, ok, "a failure carries _meta[%q]: %+v", toolctx.ErrorMetaKey, res.Meta)
	return m
}

// expectRow is what the audit log must hold for one call.
type expectRow struct {
	tool    string
	outcome string
	code    string
	message string // a substring of the row's message
}

// tour calls every demo tool on cs and checks what the client saw against
// the behaviour table; it returns the rows the audit log must then hold.
// Every result is also appended, encoded, to seen.
func tour(t *testing.T, cs *mcp.ClientSession, seen io.Writer) []expectRow {
	t.Helper()
	generic := errs.CodeInternal.DefaultMessage()
	record := func(res *mcp.CallToolResult, err error) {
		if res != nil {
			b, _ := json.Marshal(res)
			_, _ = seen.Write(b)
		}
		if err != nil {
			_, _ = io.WriteString(seen, err.Error())
		}
	}
	var rows []expectRow

	// Success: typed input, structured output.
	res, err := call(t, cs, "greet", map[string]any{"name": "Ada", "excited": true})
	record(res, err)
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, map[string]any{"greeting": "Hello, Ada!"}, res.StructuredContent)
	rows = append(rows, expectRow{"greet", "ok", "", ""})

	// Invalid arguments: the schema's feedback is public.
	res, err = call(t, cs, "divide", map[string]any{"a": 1, "b": "two"})
	record(res, err)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "invalid_arguments", errorMeta(t, res)["code"])
	assert.Contains(t, text(res), "number", "the validation feedback names what was wanted")
	rows = append(rows, expectRow{"divide", "rejected", "invalid_arguments", "b: expected a number, got a string"})

	// The feedback reads as a sentence about the argument, whichever check
	// found the problem (the schema, the JSON decoder, the tool's bounds).
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"divide", map[string]any{"a": 1, "b": nil}, "invalid arguments: b: expected a number, got null"},
		{"divide", map[string]any{"a": 1e308, "b": 1e-308}, "a / b: number out of range"},
		{"slow", map[string]any{"seconds": -5}, "seconds: must be between 0 and 3600"},
		{"slow", map[string]any{"seconds": 1e308}, "seconds: must be between 0 and 3600"},
		{"greet", map[string]any{"name": strings.Repeat("n", stack.MaxNameLen+1)}, "name: must be at most 200 characters long"},
	} {
		res, err = callArgs(t, cs, c.tool, c.args)
		record(res, err)
		require.NoError(t, err)
		assert.True(t, res.IsError, "%s %v", c.tool, c.args)
		assert.Equal(t, c.want, text(res), "%s %v", c.tool, c.args)
		assert.Equal(t, "invalid_arguments", errorMeta(t, res)["code"])
		rows = append(rows, expectRow{c.tool, "rejected", "invalid_arguments", c.want})
	}

	res, err = call(t, cs, "divide", map[string]any{"a": 7, "b": 2})
	record(res, err)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"quotient": 3.5}, res.StructuredContent)
	rows = append(rows, expectRow{"divide", "ok", "", ""})

	// An explicit public error: message and detail, never its cause.
	res, err = call(t, cs, "lookup_order", map[string]any{"id": 42})
	record(res, err)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "order 42 does not exist", text(res))
	assert.Equal(t, map[string]any{"code": "not_found", "detail": map[string]any{"id": 42.0}}, errorMeta(t, res))
	assert.Nil(t, res.StructuredContent)
	rows = append(rows, expectRow{"lookup_order", "error", "not_found", "order 42 does not exist"})

	res, err = call(t, cs, "lookup_order", map[string]any{"id": 1})
	record(res, err)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"id": 1.0, "status": "shipped"}, res.StructuredContent)
	rows = append(rows, expectRow{"lookup_order", "ok", "", ""})

	// A raw error: the generic message, no structured data; the row has
	// the connection string.
	res, err = call(t, cs, "sales_report", map[string]any{"region": "emea"})
	record(res, err)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, generic, text(res))
	assert.Equal(t, map[string]any{"code": "internal"}, errorMeta(t, res))
	assert.Nil(t, res.StructuredContent)
	rows = append(rows, expectRow{"sales_report", "error", "internal", stack.FakeDSN})

	// Panics: the same generic result; the server keeps running.
	for _, args := range []map[string]any{{"reason": "bug"}, {}} {
		res, err = call(t, cs, "crash", args)
		record(res, err)
		require.NoError(t, err)
		assert.True(t, res.IsError)
		assert.Equal(t, generic, text(res))
		assert.Equal(t, map[string]any{"code": "internal"}, errorMeta(t, res))
	}
	rows = append(rows,
		expectRow{"crash", "panic", "internal", stack.PanicSecret},
		expectRow{"crash", "panic", "internal", "assignment to entry in nil map"})

	res, err = call(t, cs, "greet", map[string]any{"name": "survivor"})
	record(res, err)
	require.NoError(t, err, "the server survived the panics")
	assert.Equal(t, map[string]any{"greeting": "Hello, survivor."}, res.StructuredContent)
	rows = append(rows, expectRow{"greet", "ok", "", ""})

	// Slow: within the deadline, then past it.
	res, err = call(t, cs, "slow", map[string]any{"seconds": 0.01})
	record(res, err)
	require.NoError(t, err)
	assert.False(t, res.IsError)
	rows = append(rows, expectRow{"slow", "ok", "", ""})

	start := time.Now()
	res, err = call(t, cs, "slow", map[string]any{"seconds": 30})
	record(res, err)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), testSlowTimeout+5*time.Second)
	assert.True(t, res.IsError)
	assert.Equal(t, "timeout", errorMeta(t, res)["code"])
	assert.Equal(t, "the tool call timed out after "+testSlowTimeout.String(), text(res))
	rows = append(rows, expectRow{"slow", "timeout", "timeout", "timed out"})

	// Unknown tool: a protocol error, and a rejected row.
	res, err = call(t, cs, "no_such_tool", map[string]any{})
	record(res, err)
	require.Error(t, err)
	rows = append(rows, expectRow{"no_such_tool", "rejected", "unknown_tool", ""})
	return rows
}

// auditRow is a row as examples/audit -json prints it.
type auditRow struct {
	Tool      string         `json:"tool"`
	Transport string         `json:"transport"`
	Outcome   string         `json:"outcome"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Detail    map[string]any `json:"detail"`
	Notes     []auditNote    `json:"notes"`
}

// auditNote is one of a row's notes, as examples/audit -json prints it.
type auditNote struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// readAudit runs examples/audit over db and returns the tool rows.
func readAudit(t *testing.T, db string, args ...string) []auditRow {
	t.Helper()
	cmd := exec.Command(auditBin, append([]string{"-db", db, "-json", "-limit", "1000"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "examples/audit: %s", stderr.String())
	var rows []auditRow
	require.NoError(t, json.Unmarshal(out, &rows), "%s", out)
	return rows
}

// checkRows checks that every expected call has its row, and nothing else
// is there.
func checkRows(t *testing.T, got []auditRow, want []expectRow, transport string) {
	t.Helper()
	require.Len(t, got, len(want), "one row per call: %+v", got)
	left := append([]auditRow(nil), got...)
	for _, w := range want {
		found := -1
		for i, g := range left {
			if g.Tool == w.tool && g.Outcome == w.outcome && g.Code == w.code && strings.Contains(g.Message, w.message) {
				found = i
				break
			}
		}
		if !assert.GreaterOrEqual(t, found, 0, "no audit row for %+v among %+v", w, left) {
			continue
		}
		assert.Equal(t, transport, left[found].Transport)
		assert.NotContains(t, left[found].Message, "goroutine ", "never a stack in a row")
		left = append(left[:found], left[found+1:]...)
	}
}

func assertNoSecrets(t *testing.T, what, seen string) {
	t.Helper()
	require.NotEmpty(t, seen)
	for _, s := range secrets {
		assert.NotContains(t, seen, s, "%s must not reach the client", s)
	}
	_ = what
}

func TestStreamableHTTP(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "audit.db")
			args := []string{"-addr", "127.0.0.1:0", "-audit-db", db, "-slow-timeout", testSlowTimeout.String()}
			if stateless {
				args = append(args, "-stateless")
			}
			p := startServer(t, args...)
			url := serverURL(t, p)
			assert.Contains(t, p.stdout.String(), "go run ./examples/client -url "+url, "the banner says how to try it")

			wire := &capture{}
			var delayPOST atomic.Int64
			// No standalone SSE stream (GET): at shutdown the server ends
			// the session as soon as the last call's response is written,
			// and go-sdk's client, on the GET stream's end (with no
			// retries), fails the whole connection, including a call whose
			// response is still in transit on its POST. That race made
			// this test flaky; the delayed POST below makes it certain
			// with the stream on. TestShutdownCancelsLateCalls keeps a
			// client with the stream.
			st := &starts{}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, st.options()).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true,
					HTTPClient: &http.Client{Transport: captureRT{c: wire, delayPOST: &delayPOST}}}, nil)
			require.NoError(t, err)
			var decoded bytes.Buffer
			want := tour(t, cs, &decoded)

			if !stateless {
				// Cancelled by the client: nothing late; a canceled row.
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 30}})
				cancel()
				require.Error(t, err)
				want = append(want, expectRow{"slow", "canceled", "canceled", ""})
			}

			// A call in flight at SIGINT finishes, and its row is flushed;
			// its result reaches the client even if the network is slow.
			delayPOST.Store(int64(500 * time.Millisecond))
			inflight := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				res, err := callSlow(ctx, cs, "inflight", 0.5)
				if err == nil && res.IsError {
					err = fmt.Errorf("in-flight call failed: %s", text(res))
				}
				inflight <- err
			}()
			// SIGINT once the call runs (sooner, it might not have
			// reached the server). Its start is heard on its POST's
			// response, which the slow network hands over late: the call
			// may then have ended on the server, its response still in
			// transit, which the shutdown waits for too.
			st.wait(t, "inflight")
			require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
			require.NoError(t, <-inflight, "the in-flight call finished during shutdown")
			want = append(want, expectRow{"slow", "ok", "", ""})
			_ = cs.Close()
			require.Equal(t, 0, p.wait(t), "SIGINT exits 0; stderr:\n%s", p.stderr)
			assert.Contains(t, p.stderr.String(), "writer closed", "the audit writer was flushed and closed")

			assertNoSecrets(t, "wire", wire.String())
			assertNoSecrets(t, "decoded", decoded.String())
			// The operator's stderr has the causes.
			assert.Contains(t, p.stderr.String(), "hunter2")
			assert.Contains(t, p.stderr.String(), stack.PanicSecret)
			assert.NotContains(t, p.stderr.String(), "session connected", "the SDK's INFO lines stay out of the operator's stderr")

			rows := readAudit(t, db)
			checkRows(t, rows, want, "streamable-http")
			for _, r := range rows {
				if r.Tool == "sales_report" {
					assert.Contains(t, r.Message, stack.FakeDSN, "the audit row names the cause")
				}
				if strings.Contains(r.Message, "got null") {
					assert.Equal(t, map[string]any{"problems": []any{map[string]any{"path": "b", "rule": "type", "expected": "number", "got": "null"}}},
						r.Detail, "the row keeps the problem as data, not the validator's text")
				}
			}
			assert.NotEmpty(t, readAudit(t, db, "-kind", "http"), "HTTP rows too")
		})
	}
}

func TestStdio(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "audit.db")
	cmd := exec.Command(serverBin, "-stdio", "-audit-db", db, "-slow-timeout", testSlowTimeout.String())
	stderr := &capture{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	var seen bytes.Buffer
	want := tour(t, cs, &seen)
	require.NoError(t, cs.Close()) // closes stdin: the server flushes and exits
	require.NotNil(t, cmd.ProcessState)
	assert.Equal(t, 0, cmd.ProcessState.ExitCode(), "stderr:\n%s", stderr)
	assert.Contains(t, stderr.String(), "writer closed")
	assertNoSecrets(t, "stdio", seen.String())

	rows := readAudit(t, db)
	checkRows(t, rows, want, "stdio")
}

// startStdio starts the server with args and connects a client to its
// stdin/stdout, copying every byte the server writes to wire. The caller
// signals and waits for the process.
func startStdio(t *testing.T, wire io.Writer, args ...string) (*exec.Cmd, *mcp.ClientSession, *capture) {
	t.Helper()
	return startStdioWith(t, nil, wire, args...)
}

// startStdioWith is startStdio with a client of the given options.
func startStdioWith(t *testing.T, opts *mcp.ClientOptions, wire io.Writer, args ...string) (*exec.Cmd, *mcp.ClientSession, *capture) {
	t.Helper()
	cmd := exec.Command(serverBin, args...)
	stderr := &capture{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, opts).Connect(context.Background(),
		&mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(stdout, wire)), Writer: stdin}, nil)
	require.NoError(t, err)
	return cmd, cs, stderr
}

// starts tells when slow calls have started on the server: the slow tool
// reports progress 0 as it starts, to a client that gave a progress token.
type starts struct {
	mu  sync.Mutex
	got map[string]chan struct{} // by progress token, closed at its first report
}

func (s *starts) ch(token string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		s.got = map[string]chan struct{}{}
	}
	c, ok := s.got[token]
	if !ok {
		c = make(chan struct{})
		s.got[token] = c
	}
	return c
}

// options are the client's: its progress handler marks the starts.
func (s *starts) options() *mcp.ClientOptions {
	var once sync.Map
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		token := fmt.Sprint(r.Params.ProgressToken)
		if _, done := once.LoadOrStore(token, true); !done {
			close(s.ch(token))
		}
	}}
}

// wait waits until the call with the progress token has started, failing
// after a generous bound.
func (s *starts) wait(t *testing.T, token string) {
	t.Helper()
	select {
	case <-s.ch(token):
	case <-time.After(time.Minute):
		t.Fatalf("the slow call %q never started", token)
	}
}

// callSlow calls the slow tool for seconds with a progress token, so that
// starts hears when it runs.
func callSlow(ctx context.Context, cs *mcp.ClientSession, token string, seconds float64) (*mcp.CallToolResult, error) {
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": seconds}, Meta: mcp.Meta{"progressToken": token}})
}

// Over stdio with every byte the server wrote captured: the tour, then
// SIGINT exits 0 with the rows flushed.
func TestStdioSIGINT(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	wire := &capture{}
	cmd, cs, stderr := startStdio(t, wire, "-stdio", "-audit-db", db, "-slow-timeout", testSlowTimeout.String())
	var decoded bytes.Buffer
	want := tour(t, cs, &decoded)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait(), "exit 0 on SIGINT; stderr:\n%s", stderr)
	assert.Contains(t, stderr.String(), "writer closed")
	assertNoSecrets(t, "stdio wire", wire.String())
	assert.Contains(t, stderr.String(), "hunter2", "diagnostics go to stderr")
	checkRows(t, readAudit(t, db), want, "stdio")
}

// Over stdio, SIGINT gives the calls in flight -shutdown-timeout to finish
// (their results reach the client), cancels those still running after it,
// and every call has its row.
func TestStdioShutdownWaitsForCalls(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	st := &starts{}
	cmd, cs, stderr := startStdioWith(t, st.options(), io.Discard, "-stdio", "-audit-db", db, "-slow-timeout", "1m", "-shutdown-timeout", "1500ms")

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	call := func(token string, seconds float64) <-chan outcome {
		out := make(chan outcome, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := callSlow(ctx, cs, token, seconds)
			out <- outcome{res, err}
		}()
		return out
	}
	short, long := call("short", 0.5), call("long", 30)
	st.wait(t, "short") // both calls are running
	st.wait(t, "long")
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))

	got := <-short
	require.NoError(t, got.err, "the short call finishes within the grace period; stderr:\n%s", stderr)
	assert.False(t, got.res.IsError, "the short call succeeds: %+v", got.res.Content)
	require.NoError(t, cmd.Wait(), "exit 0; stderr:\n%s", stderr)
	assert.Less(t, time.Since(start), 6*time.Second, "the 30 s call did not hold the shutdown")
	select {
	case got = <-long:
		if got.err == nil {
			b, _ := json.Marshal(got.res)
			assertNoSecrets(t, "late call", string(b))
		}
	case <-time.After(5 * time.Second):
		// The session closed under the call: the client may not hear of it.
	}
	assert.Contains(t, stderr.String(), "cancelling the calls still running")

	rows := readAudit(t, db)
	outcomes := map[string]int{}
	for _, r := range rows {
		require.Equal(t, "slow", r.Tool, "%+v", r)
		outcomes[r.Outcome]++
	}
	assert.Equal(t, map[string]int{"ok": 1, "canceled": 1}, outcomes, "one row per call: the short one ok, the long one cancelled: %+v", rows)
}

func TestStartupErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad flag", []string{"-port", "80"}, "-h"},
		{"bad duration", []string{"-slow-timeout", "soon"}, "-slow-timeout"},
		{"write timeout shorter than the slow tool's", []string{"-slow-timeout", "2m", "-write-timeout", "1m"}, "-write-timeout"},
		{"zero read timeout", []string{"-read-timeout", "0s"}, "-read-timeout"},
		{"no sessions", []string{"-max-sessions", "0"}, "-max-sessions"},
		{"log file in a missing directory", []string{"-log-file", filepath.Join(dir, "missing", "demo.log")}, "-log-file"},
		{"address in use", []string{"-addr", busy.Addr().String(), "-audit-db", filepath.Join(dir, "a.db")}, "-addr"},
		{"bad address", []string{"-addr", "nowhere:http:x", "-audit-db", filepath.Join(dir, "b.db")}, "-addr"},
		{"audit dir missing", []string{"-addr", "127.0.0.1:0", "-audit-db", filepath.Join(dir, "missing", "a.db")}, "-audit-db"},
		{"audit path is a directory", []string{"-addr", "127.0.0.1:0", "-audit-db", dir}, "-audit-db"},
		{"postgres unreachable", []string{"-addr", "127.0.0.1:0", "-audit-postgres", "postgres://u@127.0.0.1:1/db?connect_timeout=2"}, "-audit-postgres"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServer(t, tc.args...)
			code := p.wait(t)
			assert.NotEqual(t, 0, code)
			msg := p.stderr.String()
			lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
			assert.Len(t, lines, 1, "a one-line error: %q", msg)
			assert.True(t, strings.HasPrefix(msg, "toolmw demo server: "), msg)
			assert.Contains(t, msg, tc.want, "the message says what to change")
			assert.Empty(t, p.stdout.String(), "no banner")
		})
	}
}

// TestStartupErrorExact: each of these startup errors is exactly one line
// that suggests only what applies, and says its cause once (issue 29: a
// missing -audit-db directory suggested -audit-table; a closed PostgreSQL
// port printed its dial error twice; a -metrics-addr conflict printed the
// audit writer's closing line after the error).
func TestStartupErrorExact(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "a.db")
	// Port 1 on 127.0.0.1: closed (nothing runs as root there in tests).
	const closed = "127.0.0.1:1"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"audit dir missing", []string{"-addr", "127.0.0.1:0", "-audit-db", missing},
			fmt.Sprintf("toolmw demo server: cannot open the audit database %q: sqlstore: sqlite %q: the directory %q does not exist (create the directory, or pass -audit-db with a file path in one that exists)\n",
				missing, missing, filepath.Dir(missing))},
		{"postgres unreachable", []string{"-addr", "127.0.0.1:0", "-audit-postgres", "postgres://u@" + closed + "/db?connect_timeout=2"},
			"toolmw demo server: cannot open the PostgreSQL audit store: sqlstore: postgres: cannot connect to " + closed +
				": failed to connect to `user=u database=db`: " + closed + " (127.0.0.1): dial error: dial tcp " + closed +
				": connect: connection refused (fix -audit-postgres or $" + PostgresEnv + ")\n"},
		{"metrics address in use", []string{"-addr", "127.0.0.1:0", "-audit-db", filepath.Join(dir, "m.db"), "-metrics-addr", busy.Addr().String()},
			fmt.Sprintf("toolmw demo server: cannot listen on %[1]s for metrics: listen tcp %[1]s: bind: address already in use (another process is using it: pass -metrics-addr with another port)\n", busy.Addr())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServer(t, tc.args...)
			assert.Equal(t, 1, p.wait(t))
			assert.Equal(t, tc.want, p.stderr.String())
			assert.Empty(t, p.stdout.String(), "no banner")
		})
	}
}

// TestSignalWhileStarting: SIGINT that arrives after the listener is open
// but while the audit store is still opening is a clean stop (exit 0), not
// "cannot open the audit database: context canceled" and exit 1 (a CI run
// of the newcomer test sent Ctrl-C 305 ms after the port opened). The
// context is cancelled before run starts, so every startup step sees it.
func TestSignalWhileStarting(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"sqlite", []string{"-addr", "127.0.0.1:0", "-audit-db", filepath.Join(t.TempDir(), "a.db")}},
		{"stdio", []string{"-stdio", "-audit-db", filepath.Join(t.TempDir(), "b.db")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var out, errb bytes.Buffer
			code := run(ctx, tc.args, strings.NewReader(""), &out, &errb)
			assert.Equal(t, 0, code, "a signal during startup is the stop asked for; stderr:\n%s", errb.String())
			assert.NotContains(t, errb.String(), "context canceled", "the cancelled open is not reported as a failure")
			assert.NotContains(t, errb.String(), "cannot open", "the cancelled open is not reported as a failure")
			assert.Contains(t, errb.String(), "stopped while starting", "the operator is told why it stopped")
		})
	}
}

// -h prints the flags and exits 0.
func TestHelp(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-h"}, strings.NewReader(""), &out, &errb)
	assert.Equal(t, 0, code)
	for _, f := range []string{"-addr", "-stdio", "-stateless", "-audit-db", "-audit-postgres", "-slow-timeout",
		"-read-timeout", "-write-timeout", "-idle-timeout", "-session-idle-timeout", "-max-sessions", "-log-file"} {
		assert.Contains(t, errb.String(), f)
	}
	sc := bufio.NewScanner(strings.NewReader(errb.String()))
	require.True(t, sc.Scan())
	assert.Contains(t, sc.Text(), "usage")
}

// The README's tour: the server, examples/client with the command the banner
// prints, then examples/audit's table.
func TestTour(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-slow-timeout", testSlowTimeout.String())
	url := serverURL(t, p)
	out, err := exec.Command(clientBin, "-url", url).CombinedOutput()
	require.NoError(t, err, "%s", out)
	got := string(out)
	for _, want := range []string{
		"tools: crash, divide, greet, lookup_order, sales_report, slow",
		`-> ok {"greeting":"Hello, Ada."}`,
		`code=invalid_arguments`,
		`-> isError "order 42 does not exist" code=not_found detail={"id":42}`,
		`-> isError "` + errs.CodeInternal.DefaultMessage() + `" code=internal`,
		`-> ok {"greeting":"Hello, again."}`,
		`-> isError "the tool call timed out after 1s" code=timeout`,
		`-> cancelled by the client`,
		`-> protocol error: `,
	} {
		assert.Contains(t, got, want)
	}
	assertNoSecrets(t, "client output", got)

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait(t), "stderr:\n%s", p.stderr)

	table, err := exec.Command(auditBin, "-db", db).CombinedOutput()
	require.NoError(t, err, "%s", table)
	lines := strings.Split(strings.TrimSpace(string(table)), "\n")
	assert.Len(t, lines, 1+11, "a header and one row per call:\n%s", table)
	assert.Contains(t, string(table), stack.FakeDSN)
	assert.Contains(t, string(table), stack.PanicSecret)
	assert.Regexp(t, `slow\s+canceled\s+canceled`, string(table))
}

// The audit log on PostgreSQL: runs where CI provides a server.
func TestPostgres(t *testing.T) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	table := fmt.Sprintf("examples_server_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-postgres", dsn, "-audit-table", table,
		"-slow-timeout", testSlowTimeout.String())
	url := serverURL(t, p)
	assert.Contains(t, p.stdout.String(), "-table "+table)
	wire := &capture{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: captureRT{c: wire}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	var decoded bytes.Buffer
	want := tour(t, cs, &decoded)
	_ = cs.Close()
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait(t), "stderr:\n%s", p.stderr)
	assertNoSecrets(t, "wire", wire.String())

	cmd := exec.Command(auditBin, "-postgres", dsn, "-table", table, "-json", "-limit", "1000")
	out, err := cmd.Output()
	require.NoError(t, err)
	var rows []auditRow
	require.NoError(t, json.Unmarshal(out, &rows), "%s", out)
	checkRows(t, rows, want, "streamable-http")
}

// A call still running when -shutdown-timeout passes is cancelled: the
// server exits 0 without waiting for it, and its row is flushed.
func TestShutdownCancelsLateCalls(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-slow-timeout", "1m", "-shutdown-timeout", "300ms")
	url := serverURL(t, p)
	st := &starts{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, st.options()).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := callSlow(ctx, cs, "late", 30)
		if err == nil {
			b, _ := json.Marshal(res)
			assertNoSecrets(t, "late call", string(b))
		}
	}()
	st.wait(t, "late") // the call is running
	start := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, p.wait(t), "stderr:\n%s", p.stderr)
	assert.Less(t, time.Since(start), 5*time.Second, "the 30s call did not hold the shutdown")
	<-done
	rows := readAudit(t, db)
	require.Len(t, rows, 1)
	assert.Equal(t, "slow", rows[0].Tool)
	assert.Equal(t, "canceled", rows[0].Outcome, "%+v", rows[0])
	assert.Contains(t, p.stderr.String(), "cancelling the calls still running")
}

// {"a":1e400} is a number out of range, not arguments that are not an
// object; the row keeps the decoder's own text. (Over stdio: go-sdk's
// client cannot send 1e400 with the 2026 protocol's headers.)
func TestNumberOutOfRange(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	wire := &capture{}
	cmd, cs, stderr := startStdio(t, wire, "-stdio", "-audit-db", db)
	res, err := callArgs(t, cs, "divide", map[string]any{"a": json.Number("1e400"), "b": 1})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "invalid arguments: a: number out of range", text(res))
	require.NoError(t, cs.Close())
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr)
	rows := readAudit(t, db)
	require.Len(t, rows, 1)
	assert.Equal(t, "invalid arguments: a: number out of range", rows[0].Message)
	assert.Equal(t, map[string]any{"problems": []any{map[string]any{"path": "a", "rule": "range", "expected": "a number the tool can hold", "got": "number"}}},
		rows[0].Detail, "the row keeps the problem as data, not the decoder's text")
}
