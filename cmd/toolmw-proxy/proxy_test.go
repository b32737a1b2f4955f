package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/toolctx"
)

// proxied is a proxy run in the test's process, over stdio pipes, with a
// go-sdk client connected to it.
type proxied struct {
	cs     *mcp.ClientSession
	db     string
	stderr *syncbuf.Buffer
	done   chan int
	// progress gets the client's progress notifications.
	progress chan *mcp.ProgressNotificationParams
	// listChanged gets the client's tools/list_changed notifications.
	listChanged chan struct{}
}

// leakyConfig is the configuration in front of the leaky upstream (this
// test binary in roleLeaky), with extra YAML appended.
func leakyConfig(t testing.TB, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.yaml")
	cfg := "upstream:\n  env:\n    " + roleEnv + ": " + roleLeaky + "\n  restart_min: 50ms\n  restart_max: 1s\n" + extra
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// startProxy runs the proxy over stdio with args (the upstream command
// included) and connects a client; the cleanup closes the client and waits
// for the proxy to exit.
func startProxy(t *testing.T, args ...string) *proxied {
	t.Helper()
	return startProxyWith(t, nil, args...)
}

// startProxyWith is startProxy with a client whose options with sets
// further (its sampling and elicitation handlers, say). The client has one
// root, clientRoot.
func startProxyWith(t *testing.T, with func(*mcp.ClientOptions), args ...string) *proxied {
	t.Helper()
	p := &proxied{db: filepath.Join(t.TempDir(), "audit.db"), stderr: &syncbuf.Buffer{}, done: make(chan int, 1),
		progress: make(chan *mcp.ProgressNotificationParams, 100), listChanged: make(chan struct{}, 100)}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		code := run(context.Background(), append([]string{"-stdio", "-audit-db", p.db}, args...), inR, outW, p.stderr)
		_ = outW.Close()
		p.done <- code
	}()
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			p.progress <- r.Params
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			p.listChanged <- struct{}{}
		},
	}
	if with != nil {
		with(opts)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, opts)
	//lint:ignore SA1019 roots are deprecated as of 2026-07-28 (SEP-2577) but still what an upstream below it may ask for (bridge_test.go)
	client.AddRoots(&mcp.Root{URI: clientRoot, Name: "project"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		_ = inW.Close()
		t.Fatalf("connect to the proxy: %v\nproxy's stderr:\n%s", err, p.stderr)
	}
	p.cs = cs
	t.Cleanup(func() {
		_ = cs.Close()
		_ = inW.Close()
		select {
		case code := <-p.done:
			if code != 0 {
				t.Errorf("the proxy exited with status %d:\n%s", code, p.stderr)
			}
		case <-time.After(time.Minute):
			t.Errorf("the proxy did not exit within a minute of its client closing stdin:\n%s", p.stderr)
		}
	})
	return p
}

// startLeaky runs the proxy in front of the leaky upstream.
func startLeaky(t *testing.T, extraConfig string) *proxied {
	return startProxy(t, "-config", leakyConfig(t, extraConfig), "--", os.Args[0])
}

// call calls a tool with a 30s deadline.
func (p *proxied) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "tools/call %s through the proxy: the proxy answers every call with a result", name)
	return res
}

// rows waits (up to a minute) until the audit store has at least n rows of
// tool, and returns them, newest first.
func (p *proxied) rows(t *testing.T, tool string, n int) []audit.Record {
	t.Helper()
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, p.db, sqlstore.Config{})
	require.NoError(t, err)
	defer store.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		rows, err := store.Query(ctx, sqlstore.Query{Kind: audit.KindTool, Tool: tool})
		require.NoError(t, err)
		if len(rows) >= n || time.Now().After(deadline) {
			require.GreaterOrEqual(t, len(rows), n, "audit rows of %s", tool)
			return rows
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// errorCode is the toolmw error code the result carries in its _meta.
func errorCode(t *testing.T, res *mcp.CallToolResult) errs.Code {
	t.Helper()
	b, err := json.Marshal(res.Meta[toolctx.ErrorMetaKey])
	require.NoError(t, err)
	var e struct {
		Code errs.Code `json:"code"`
	}
	require.NoError(t, json.Unmarshal(b, &e), "the _meta of %s", b)
	return e.Code
}

// assertClean fails when the canary or the proxy's secret is in what the
// client got.
func assertClean(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.NotContains(t, string(b), canary)
	assert.NotContains(t, string(b), envSecret)
	assert.NotContains(t, string(b), "goroutine")
}

// TestProxyForwards: the leaky upstream's tools, through the proxy. A
// success and the tool's own isError feedback pass as they are; every raw
// error (a Go error's text, a JSON-RPC error's message and data, whatever
// its code) reaches the client as the generic internal failure, and its
// row holds the raw text; progress reaches the client under its own token;
// the upstream's environment holds none of the proxy's.
func TestProxyForwards(t *testing.T) {
	t.Setenv(envSecretVar, envSecret)
	p := startLeaky(t, "")

	tools, err := p.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.Subset(t, names, []string{"echo", "raw_error", "jsonrpc_error", "feedback", "env", "hang"})

	res := p.call(t, "echo", map[string]any{"x": 1})
	assert.False(t, res.IsError)
	assert.JSONEq(t, `{"x":1}`, text(res))

	res = p.call(t, "feedback", nil)
	assert.True(t, res.IsError)
	assert.Equal(t, "no such order", text(res), "the upstream's own isError result is tool feedback: passed as it is")

	for _, tool := range []string{"raw_error", "jsonrpc_error", "invalid_params"} {
		res := p.call(t, tool, nil)
		assert.True(t, res.IsError, tool)
		assert.Equal(t, errs.CodeInternal, errorCode(t, res), tool)
		assertClean(t, res)
		rows := p.rows(t, tool, 1)
		assert.Equal(t, audit.OutcomeError, rows[0].Outcome, tool)
		assert.Contains(t, rows[0].Message, canary, "%s: the row holds the upstream's raw text", tool)
	}

	res = p.call(t, "env", nil)
	assertClean(t, res)
	env := text(res)
	assert.Contains(t, env, "PATH=")
	assert.Contains(t, env, roleEnv+"="+roleLeaky, "the variable upstream.env sets")
	assert.NotContains(t, env, envSecretVar, "a variable of the proxy's environment that upstream.pass_env does not name")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	params := &mcp.CallToolParams{Name: "progress"}
	params.SetProgressToken("client-token-1")
	res, err = p.cs.CallTool(ctx, params)
	require.NoError(t, err)
	assert.Equal(t, "done", text(res))
	for i := range 3 {
		select {
		case n := <-p.progress:
			assert.Equal(t, "client-token-1", n.ProgressToken, "the client's own token")
			assert.Equal(t, float64(i+1), n.Progress)
		case <-ctx.Done():
			t.Fatalf("progress notification %d did not arrive", i+1)
		}
	}
}

// pidOf asks the upstream for its process id.
func (p *proxied) pidOf(t *testing.T) int {
	t.Helper()
	res := p.call(t, "pid", nil)
	require.False(t, res.IsError, text(res))
	pid, err := strconv.Atoi(text(res))
	require.NoError(t, err)
	return pid
}

// TestUpstreamKilledMidCall kills the upstream while a call is in flight:
// the client gets the generic internal failure well within its deadline,
// the row says why (the process was killed), and the next call is served
// by the restarted upstream.
func TestUpstreamKilledMidCall(t *testing.T) {
	p := startLeaky(t, "")
	pid := p.pidOf(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	params := &mcp.CallToolParams{Name: "hang"}
	params.SetProgressToken("hang-1")
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := p.cs.CallTool(ctx, params)
		got <- answer{res, err}
	}()
	select {
	case <-p.progress: // the upstream has the call
	case <-ctx.Done():
		t.Fatal("the hang tool never started")
	}
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	var a answer
	select {
	case a = <-got:
	case <-ctx.Done():
		t.Fatalf("the call in flight was not answered when its upstream died:\n%s", p.stderr)
	}
	require.NoError(t, a.err)
	assert.True(t, a.res.IsError)
	assert.Equal(t, errs.CodeInternal, errorCode(t, a.res))
	assert.NotContains(t, text(a.res), "killed")
	assertClean(t, a.res)

	rows := p.rows(t, "hang", 1)
	assert.Equal(t, audit.OutcomeError, rows[0].Outcome)
	assert.Contains(t, rows[0].Message, "the upstream process exited: signal: killed", "the row says why")

	next := p.pidOf(t)
	assert.NotEqual(t, pid, next, "the next call is served by the restarted upstream")
	assert.Contains(t, p.stderr.String(), "upstream: ended; restarting it", "the log says so")
}

// TestUpstreamCrashesAndGarbage: an upstream that panics (go-sdk does not
// recover) dies with its stack on stderr, and one that writes a line that
// is not JSON-RPC breaks its connection: either way the call is the generic
// failure, the row says why, and the upstream is restarted.
func TestUpstreamCrashesAndGarbage(t *testing.T) {
	p := startLeaky(t, "")
	for _, c := range []struct{ tool, why string }{
		{"crash", "the upstream process exited: exit status 2"},
		{"garbage", "the upstream's MCP connection failed"},
	} {
		pid := p.pidOf(t)
		res := p.call(t, c.tool, nil)
		assert.True(t, res.IsError, c.tool)
		assert.Equal(t, errs.CodeInternal, errorCode(t, res), c.tool)
		assertClean(t, res)
		rows := p.rows(t, c.tool, 1)
		assert.Contains(t, rows[0].Message, c.why, c.tool)
		assert.NotEqual(t, pid, p.pidOf(t), "%s: restarted", c.tool)
	}
}

// TestUpstreamAnswerUnreadable: an upstream whose answer go-sdk's client
// cannot read (a content block of an unknown type) is still connected.
// The call is the generic failure at once, its row says the answer could
// not be read, and the upstream keeps serving: it is not taken for one
// whose connection failed, which the proxy waits for and restarts.
func TestUpstreamAnswerUnreadable(t *testing.T) {
	p := startLeaky(t, "")
	pid := p.pidOf(t)
	start := time.Now()
	res := p.call(t, "bad_result", nil)
	took := time.Since(start)
	assert.True(t, res.IsError)
	assert.Equal(t, errs.CodeInternal, errorCode(t, res))
	assertClean(t, res)
	assert.Less(t, took, time.Second, "the proxy does not wait for an end that does not come")
	rows := p.rows(t, "bad_result", 1)
	assert.Contains(t, rows[0].Message, "the upstream's answer could not be read", "the row says what failed")
	assert.Contains(t, rows[0].Message, "hologram", "the row keeps the client's reason")
	assert.NotContains(t, rows[0].Message, "connection failed")
	assert.Equal(t, pid, p.pidOf(t), "the upstream was not restarted")
	assert.False(t, p.call(t, "echo", map[string]any{}).IsError, "and serves the next call")
}

// TestUpstreamHung stops the upstream process (SIGSTOP: it answers
// nothing, pings included): the proxy takes it for hung, kills it, fails
// the call in flight with the generic failure and restarts it.
func TestUpstreamHung(t *testing.T) {
	p := startLeaky(t, "  ping_interval: 200ms\n  ping_timeout: 500ms\n")
	pid := p.pidOf(t)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	res := p.call(t, "echo", map[string]any{})
	assert.True(t, res.IsError)
	assert.Equal(t, errs.CodeInternal, errorCode(t, res))
	rows := p.rows(t, "echo", 1)
	assert.Contains(t, rows[0].Message, "did not answer a ping")
	assert.NotEqual(t, pid, p.pidOf(t))
}

// TestCallDeadline: a tool that never answers gets the public timeout its
// configuration gives it, and the upstream keeps serving.
func TestCallDeadline(t *testing.T) {
	p := startLeaky(t, "tools:\n  hang:\n    timeout: 300ms\n")
	start := time.Now()
	res := p.call(t, "hang", nil)
	assert.Less(t, time.Since(start), 20*time.Second)
	assert.True(t, res.IsError)
	assert.Equal(t, errs.CodeTimeout, errorCode(t, res))
	assert.False(t, p.call(t, "echo", map[string]any{}).IsError)
}

// TestToolListChanges: when the upstream's tool list changes, the proxy
// mirrors it, its client is told, and the new tool is served.
func TestToolListChanges(t *testing.T) {
	p := startLeaky(t, "")
	require.Equal(t, "added", text(p.call(t, "add_tool", nil)))
	select {
	case <-p.listChanged:
	case <-time.After(time.Minute):
		t.Fatal("the client was not told the tool list changed")
	}
	tools, err := p.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.Contains(t, names, "added_later")
	assert.Equal(t, "added later", text(p.call(t, "added_later", nil)))
}

// TestCancellationReachesUpstream: a client that cancels its call cancels
// the upstream's, and the row says canceled.
func TestCancellationReachesUpstream(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(dirEnv, dir) // the upstream gets it through pass_env
	p := startLeaky(t, "  pass_env: ["+dirEnv+"]\n")
	ctx, cancel := context.WithCancel(context.Background())
	params := &mcp.CallToolParams{Name: "wait_cancel"}
	params.SetProgressToken("wait-1")
	done := make(chan error, 1)
	go func() {
		_, err := p.cs.CallTool(ctx, params)
		done <- err
	}()
	select {
	case <-p.progress: // the upstream has the call
	case <-time.After(time.Minute):
		t.Fatal("wait_cancel never started")
	}
	cancel()
	<-done
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "cancelled")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the upstream's call was never cancelled")
		time.Sleep(20 * time.Millisecond)
	}
	rows := p.rows(t, "wait_cancel", 1)
	assert.Equal(t, audit.OutcomeCanceled, rows[0].Outcome)
}

// TestScrubSecretsOnFeedback: the upstream's own isError feedback passes as
// it is, unless scrub_secrets is configured: then the connection string's
// password is replaced, and the row notes it.
func TestScrubSecretsOnFeedback(t *testing.T) {
	plain := startLeaky(t, "")
	assert.Contains(t, text(plain.call(t, "secret_feedback", nil)), "hunter2", "feedback is public: as it is without scrub_secrets")

	scrubbed := startLeaky(t, "scrub_secrets: {}\n")
	res := scrubbed.call(t, "secret_feedback", nil)
	assert.True(t, res.IsError)
	assert.NotContains(t, text(res), "hunter2")
	assert.Contains(t, text(res), "db.internal", "only the secret is replaced")
}

// TestRateLimitPerTool: a tool's rate limit answers the public rejection
// once its burst is spent; other tools are not limited.
func TestRateLimitPerTool(t *testing.T) {
	p := startLeaky(t, "tools:\n  echo:\n    rate: {per_second: 0.001, burst: 2}\n")
	for range 2 {
		assert.False(t, p.call(t, "echo", map[string]any{}).IsError)
	}
	res := p.call(t, "echo", map[string]any{})
	assert.True(t, res.IsError)
	assert.Equal(t, errs.CodeRateLimited, errorCode(t, res))
	assert.False(t, p.call(t, "pid", nil).IsError)
}
