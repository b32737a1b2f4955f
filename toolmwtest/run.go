package toolmwtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// ToolPrefix starts the name of every failing tool the SDK runners
// register; [ToolName] gives the whole name.
const ToolPrefix = "toolmwtest_fail_"

// AliveTool is the tool the SDK runners register next to the failing ones:
// it answers "ok", and a call to it after each call tells that the server
// still answers (cheaper than listing hundreds of tools).
const AliveTool = "toolmwtest_alive"

// ToolName returns the name of the failing tool for the i-th failure.
func ToolName(i int) string { return fmt.Sprintf("%s%03d", ToolPrefix, i) }

// Tool is a tool as the client listed it.
type Tool struct {
	Name string
	// InputSchema is the tool's input schema in any JSON-encodable form.
	InputSchema any
}

// Conn is a client connected to the server under test, as an SDK runner
// provides it: the SDK's own client behind three functions, and every byte
// the client received from the server.
type Conn struct {
	// Transport names the transport, for reports.
	Transport string
	ListTools func(ctx context.Context) ([]Tool, error)
	// CallTool calls a tool and returns the result as the client library
	// decoded it; its error is the SDK client's (a protocol error, a broken
	// connection), not the tool's isError result.
	CallTool func(ctx context.Context, name string, args map[string]any) (Answer, error)
	// Alive tells whether the server still answers when it has no
	// [AliveTool]: it must send a request and wait for its answer
	// (tools/list does; ping is gone from protocol 2026-07-28).
	Alive func(ctx context.Context) error
	// Received has every byte the client received, in order.
	Received *Recorder
	// Close ends the session and stops the server.
	Close func()
}

// Answer is a tool result as the client decoded it: what a model reads.
type Answer struct {
	IsError bool
	// Text is the text of its text contents, joined.
	Text string
	// Structured reports structured content.
	Structured bool
}

// ExerciseConfig says what [Exercise] checks.
type ExerciseConfig struct {
	// Failures are the failing tools registered on the server, by index
	// (see [ToolName]).
	Failures []Failure
	// Secrets are more strings that must never reach the client.
	Secrets []string
	// SkipOwnTools leaves the server's own tools uncalled.
	SkipOwnTools bool
	// CallTimeout bounds each call, the liveness probe after it and closing the
	// connection. Default 10s.
	CallTimeout time.Duration
}

// Problem is one thing a run found wrong.
type Problem struct {
	// Transport, Tool and Shape say where: Shape is the failure's shape,
	// or the arguments given to one of the server's own tools.
	Transport, Tool, Shape string
	// Finding is what the client received, for a leak; zero otherwise.
	Finding Finding
	// Issue describes a problem that is not a leak (the server stopped
	// answering, a cause was lost).
	Issue string
}

// String renders the problem for a test failure.
func (p Problem) String() string {
	what := p.Issue
	if what == "" {
		what = p.Finding.String()
	}
	return fmt.Sprintf("[%s] %s (%s): %s", p.Transport, p.Tool, p.Shape, what)
}

// Result is what runs did and found. The zero Result is ready for
// [Exercise] to add to.
type Result struct {
	// Calls is how many tool calls were made.
	Calls int
	// Problems are the leaks and failures found, in the order found.
	Problems []Problem

	called map[string]bool // canaries of the failures called
}

// String renders the result as a report.
func (r *Result) String() string {
	if len(r.Problems) == 0 {
		return fmt.Sprintf("toolmwtest: %d calls, nothing leaked", r.Calls)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "toolmwtest: %d calls, %d problems:\n", r.Calls, len(r.Problems))
	for _, p := range r.Problems {
		b.WriteString("  ")
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func (r *Result) problem(p Problem) { r.Problems = append(r.Problems, p) }

// Exercise calls every tool conn lists — each failing tool once, each of
// the server's own with arguments made from its input schema (valid, none,
// each property of the wrong type) — and adds to res a problem for each
// canary, secret, Go stack or source path in what the client received
// during the call, for a call with no answer within the timeout, and for a
// server that no longer answers; it stops at the first call that
// hangs or kills the server. It closes conn.
func Exercise(ctx context.Context, conn Conn, opts ExerciseConfig, res *Result) error {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 10 * time.Second
	}
	defer func() {
		if !within(opts.CallTimeout, conn.Close) {
			res.problem(Problem{Transport: conn.Transport, Tool: "-", Shape: "closing the session",
				Issue: fmt.Sprintf("closing the client and the server did not finish within %v: a call still runs", opts.CallTimeout)})
		}
	}()
	secrets := append(canaries(opts.Failures), opts.Secrets...)
	failing := map[string]Failure{}
	for i, f := range opts.Failures {
		failing[ToolName(i)] = f
	}
	lctx, cancel := context.WithTimeout(ctx, opts.CallTimeout)
	tools, err := conn.ListTools(lctx)
	cancel()
	if err != nil {
		return fmt.Errorf("%s: list tools: %w", conn.Transport, err)
	}
	if res.called == nil {
		res.called = map[string]bool{}
	}
	alive := conn.Alive
	for _, tool := range tools {
		if tool.Name == AliveTool {
			alive = func(ctx context.Context) error { _, err := conn.CallTool(ctx, AliveTool, nil); return err }
		}
	}
	for _, tool := range tools {
		var calls []call
		if tool.Name == AliveTool {
			continue
		}
		if f, ok := failing[tool.Name]; ok {
			calls = []call{{shape: f.Shape, args: map[string]any{}}}
			res.called[f.Canary] = true
		} else if !opts.SkipOwnTools {
			calls = argumentsFor(tool.InputSchema)
		}
		for _, c := range calls {
			if !exercise(ctx, conn, alive, opts, secrets, tool.Name, c, res) {
				return nil // the server hangs or is gone: reported
			}
		}
	}
	return nil
}

// exercise makes one call and checks what came back; it reports whether
// the server still answers.
func exercise(ctx context.Context, conn Conn, alive func(context.Context) error, opts ExerciseConfig, secrets []string, tool string, c call, res *Result) bool {
	from := conn.Received.Len()
	cctx, cancel := context.WithTimeout(ctx, opts.CallTimeout)
	_, err := conn.CallTool(cctx, tool, c.args)
	cancel()
	res.Calls++
	seen := map[string]bool{}
	for _, f := range Scan(conn.Received.Since(from), secrets) {
		if key := f.What + "\x00" + f.Match; !seen[key] { // the first of each is enough
			seen[key] = true
			res.problem(Problem{Transport: conn.Transport, Tool: tool, Shape: c.shape, Finding: f})
		}
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		res.problem(Problem{Transport: conn.Transport, Tool: tool, Shape: c.shape, Issue: fmt.Sprintf("no answer within %v", opts.CallTimeout)})
		return false // a server that hangs one call may hang the next
	}
	pctx, cancel := context.WithTimeout(ctx, opts.CallTimeout)
	defer cancel()
	if err := alive(pctx); err != nil {
		res.problem(Problem{Transport: conn.Transport, Tool: tool, Shape: c.shape, Issue: "the server stopped answering after this call: " + err.Error()})
		return false
	}
	return true
}

// CheckCauses adds to res a problem for each raw or panic failure that was
// called and whose canary causes did not see.
func CheckCauses(fs []Failure, causes *Causes, res *Result) {
	for _, f := range fs {
		if (f.Kind == Raw || f.Kind == Panic) && res.called[f.Canary] && !causes.Saw(f.Canary) {
			res.problem(Problem{Transport: "server side", Tool: "-", Shape: f.Shape,
				Issue: "the raw cause reached neither diagnostics nor the audit log"})
		}
	}
}

func canaries(fs []Failure) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Canary
	}
	return out
}

// within runs f and reports whether it returned within d; when it did not,
// f goes on in its goroutine (the server under test is broken).
func within(d time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// Recorder keeps every byte written to it, in order; it is safe for
// concurrent use. SDK runners tee what the client receives into one.
type Recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (r *Recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// Len returns how many bytes were written.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Len()
}

// Since returns a copy of what was written after the first n bytes.
func (r *Recorder) Since(n int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes()[n:])
}

// Tee returns rc, every byte read from it also written to r.
func (r *Recorder) Tee(rc io.ReadCloser) io.ReadCloser {
	return readCloser{io.TeeReader(rc, r), rc}
}

// HTTPTransport returns next, every response's status line and body also
// written to r as the client reads them.
func (r *Recorder) HTTPTransport(next http.RoundTripper) http.RoundTripper {
	return recordingTransport{next: next, rec: r}
}

type readCloser struct {
	io.Reader
	io.Closer
}

type recordingTransport struct {
	next http.RoundTripper
	rec  *Recorder
}

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	fmt.Fprintf(t.rec, "HTTP %d\n", resp.StatusCode)
	resp.Body = t.rec.Tee(resp.Body)
	return resp, nil
}

// Transport is one way for an SDK kit's client to reach the server under
// test. Each SDK kit (toolmwtest/mcpsdktest, toolmwtest/mcpgotest) says
// which of these it serves; [Command] is a server binary's stdio.
type Transport struct {
	name    string
	command func() *exec.Cmd
}

// The transports of the SDK kits. InMemory connects the SDK's client and
// server in the process (go-sdk: through pipes, so every byte is seen;
// mcp-go: its in-process client, whose results are recorded as JSON); the
// HTTP ones serve on an httptest server on 127.0.0.1; Stdio serves over
// pipes in the process.
var (
	InMemory       = Transport{name: "in-memory"}
	StreamableHTTP = Transport{name: "streamable-http"}
	StatelessHTTP  = Transport{name: "streamable-http-stateless"}
	SSE            = Transport{name: "sse"}
	Stdio          = Transport{name: "stdio"}
)

// Command returns a transport to the stdio of a server binary: cmd is
// called once per run for a fresh *exec.Cmd, whose environment gets
// [FailuresEnv]; the binary registers the failing tools itself (see
// [FailuresFromEnv]), or only its own tools are called.
func Command(name string, cmd func() *exec.Cmd) Transport {
	return Transport{name: "stdio: " + name, command: cmd}
}

// String returns the transport's name, as reports show it.
func (t Transport) String() string { return t.name }

// Plan is what an SDK kit's run checks: its Config's fields that do not
// name the SDK.
type Plan struct {
	// Transports to run over.
	Transports []Transport
	// Seed and Count choose the failures. Default seed 1, count 100.
	Seed  int64
	Count int
	// Causes, if set, is checked after the run: every raw or panic
	// failure's canary must have reached a diagnostics event or an audit
	// row recorded there.
	Causes *Causes
	// Secrets are more strings that must never reach the client.
	Secrets []string
	// SkipOwnTools leaves the server's own tools uncalled.
	SkipOwnTools bool
	// CallTimeout bounds each call. Default 10s.
	CallTimeout time.Duration
}

// Connector is an SDK kit's connector: it starts the server under test for
// tr with the failures fs registered (a [Command] transport's binary
// registers its own) and connects the SDK's client to it.
type Connector func(ctx context.Context, tr Transport, fs []Failure) (Conn, error)

// Check runs plan with an SDK's connector: failures(seed, count) makes the
// failures ([Generate], or the SDK kit's own that add its SDK's shapes);
// each transport is connected and [Exercise]d, and the causes checked.
func Check(ctx context.Context, plan Plan, failures func(seed int64, n int) []Failure, connect Connector) (*Result, error) {
	if plan.Seed == 0 {
		plan.Seed = 1
	}
	if plan.Count == 0 {
		plan.Count = 100
	}
	fs := failures(plan.Seed, plan.Count)
	opts := ExerciseConfig{Failures: fs, Secrets: plan.Secrets, SkipOwnTools: plan.SkipOwnTools, CallTimeout: plan.CallTimeout}
	res := new(Result)
	for _, tr := range plan.Transports {
		if tr.command != nil {
			tr.command = withFailuresEnv(tr.command, plan.Seed, plan.Count)
		}
		conn, err := connect(ctx, tr, fs)
		if err != nil {
			return res, fmt.Errorf("%s: %w", tr, err)
		}
		if err := Exercise(ctx, conn, opts, res); err != nil {
			return res, err
		}
	}
	if plan.Causes != nil {
		CheckCauses(fs, plan.Causes, res)
	}
	return res, nil
}

// StartCommand starts the binary of a [Command] transport and returns its
// stdin and stdout, and stop, which closes its stdin and waits for it to
// exit (killing it after 5s). It returns an error for any other transport.
func StartCommand(tr Transport) (stdin io.WriteCloser, stdout io.ReadCloser, stop func(), err error) {
	if tr.command == nil {
		return nil, nil, nil, fmt.Errorf("toolmwtest: %s is not a Command transport", tr)
	}
	cmd := tr.command()
	if stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, err
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("start: %w", err)
	}
	stop = func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	return stdin, stdout, stop, nil
}

func withFailuresEnv(cmd func() *exec.Cmd, seed int64, n int) func() *exec.Cmd {
	return func() *exec.Cmd {
		c := cmd()
		c.Env = append(c.Environ(), fmt.Sprintf("%s=%d,%d", FailuresEnv, seed, n))
		return c
	}
}

// Report reports each problem of a run with t.Error, and a run that could
// not be made with t.Fatalf; it returns res.
func Report(t testing.TB, res *Result, err error) *Result {
	t.Helper()
	if err != nil {
		t.Fatalf("toolmwtest: %v", err)
	}
	for _, p := range res.Problems {
		t.Error(p.String())
	}
	return res
}

// CheckTable checks the rows of the behaviour table ([CheckRows]) on a
// server that connect starts with the rows' tools registered for secret,
// a fresh canary. A zero timeout is 10s.
func CheckTable(ctx context.Context, causes *Causes, timeout time.Duration, connect func(secret string) (Conn, error)) (*Result, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	secret := Generate(time.Now().UnixNano(), 1)[0].Canary
	conn, err := connect(secret)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	res := new(Result)
	CheckRows(ctx, conn, secret, causes, timeout, res)
	return res, nil
}
