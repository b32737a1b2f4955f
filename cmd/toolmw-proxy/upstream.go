package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The upstream is the one MCP server behind the proxy. An upstream
// manager keeps one connection to it at a time, a generation: for a
// command, one run of the process; for a URL, one MCP session. When a
// generation ends (the process exited, the connection failed, an answer
// was not JSON-RPC, a ping went unanswered), the calls in flight on it fail
// with the reason, and the manager starts the next one after a backoff,
// saying so in the log.

// generation is one connection to the upstream.
type generation struct {
	n       int // 1 for the first
	session *mcp.ClientSession
	pid     int // the process's, for a command

	ended chan struct{} // closed when the generation is over
	why   error         // why it ended; read once ended is closed
}

// endedWhy waits up to d for the generation to end, and says why it did.
func (g *generation) endedWhy(d time.Duration) (error, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-g.ended:
		return g.why, true
	case <-t.C:
		return nil, false
	}
}

// aliveTimeout bounds alive's ping.
const aliveTimeout = 2 * time.Second

// alive reports whether the generation's connection still carries a
// round trip: a ping answered within aliveTimeout, on ctx's values but not
// its cancellation (the call that asks may have ended).
func (g *generation) alive(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), aliveTimeout)
	defer cancel()
	return g.session.Ping(ctx, nil) == nil
}

// errNotStarted is the cause of a call that found no upstream running.
var errNotStarted = errors.New("the upstream MCP server is not running")

// upstream manages the generations.
type upstream struct {
	cfg    UpstreamConfig
	client *mcp.Client
	logger *slog.Logger
	stderr io.Writer // the command's stderr goes here
	// onStart runs when a generation has connected, before calls use it
	// (the proxy mirrors the upstream's tools then).
	onStart func(ctx context.Context, g *generation) error
	// sawProgress is told of each progress notification as it comes off
	// the upstream's stream (progress.go).
	sawProgress func(tok string)

	mu      sync.Mutex
	cur     *generation   // nil between generations
	changed chan struct{} // closed, and replaced, when cur is set
	lastErr error         // why the last start failed (nil once one started)
	ready   chan struct{} // closed when the first generation connected or the first start failed
	first   error         // the first start's error

	stop context.CancelFunc
	done chan struct{}
}

// startUpstream starts the manager and waits for the first generation:
// its error is the first start's.
func startUpstream(cfg UpstreamConfig, client *mcp.Client, logger *slog.Logger, stderr io.Writer,
	onStart func(context.Context, *generation) error, sawProgress func(string)) (*upstream, error) {
	u := &upstream{cfg: cfg, client: client, logger: logger, stderr: stderr, onStart: onStart, sawProgress: sawProgress,
		changed: make(chan struct{}), ready: make(chan struct{}), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	u.stop = cancel
	go u.loop(ctx)
	<-u.ready
	if u.first != nil {
		u.Close()
		return nil, u.first
	}
	return u, nil
}

// describe names the upstream in logs and errors.
func (u *upstream) describe() string {
	if u.cfg.URL != "" {
		return u.cfg.URL
	}
	return strings.Join(u.cfg.Command, " ")
}

// Close ends the current generation (a command gets its stdin closed, then
// SIGKILL after 2s) and stops restarting; it returns once the process has
// exited.
func (u *upstream) Close() {
	u.stop()
	<-u.done
}

// loop runs generation after generation until ctx ends.
func (u *upstream) loop(ctx context.Context) {
	defer close(u.done)
	backoff := u.cfg.RestartMin
	for n := 1; ; n++ {
		g, wait, err := u.connect(ctx, n)
		if err != nil {
			u.mu.Lock()
			u.lastErr = err
			u.mu.Unlock()
			if n == 1 {
				u.first = err
				close(u.ready)
				return
			}
			if ctx.Err() != nil {
				return
			}
			u.logger.Error("upstream: cannot start it; trying again", "upstream", u.describe(), "generation", n, "err", err, "in", backoff)
		} else {
			started := time.Now()
			if err := u.onStart(ctx, g); err != nil {
				u.logger.Warn("upstream: cannot read its tools", "generation", n, "err", err)
			}
			u.mu.Lock()
			u.cur, u.lastErr = g, nil
			close(u.changed)
			u.changed = make(chan struct{})
			u.mu.Unlock()
			if n == 1 {
				close(u.ready)
			}
			attrs := []any{"upstream", u.describe(), "generation", n}
			if g.pid != 0 {
				attrs = append(attrs, "pid", g.pid)
			}
			u.logger.Info("upstream: running", attrs...)
			g.why = wait()
			u.mu.Lock()
			u.cur = nil
			u.mu.Unlock()
			close(g.ended)
			if ctx.Err() != nil {
				return
			}
			if time.Since(started) > time.Minute {
				backoff = u.cfg.RestartMin
			}
			u.logger.Error("upstream: ended; restarting it", "upstream", u.describe(), "generation", n, "why", g.why, "in", backoff)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, u.cfg.RestartMax)
	}
}

// current returns the running generation. While the upstream restarts
// after it ended, the call waits for the next one (until ctx ends); when
// the last start failed, it fails at once with that start's error.
func (u *upstream) current(ctx context.Context) (*generation, error) {
	for {
		u.mu.Lock()
		g, ch, last := u.cur, u.changed, u.lastErr
		u.mu.Unlock()
		if g != nil {
			return g, nil
		}
		if last != nil {
			return nil, fmt.Errorf("%w: its last start failed: %v", errNotStarted, last)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: it is restarting: %w", errNotStarted, context.Cause(ctx))
		case <-u.done:
			return nil, fmt.Errorf("%w: the proxy is shutting down", errNotStarted)
		}
	}
}

// connect starts generation n and returns it with the function that waits
// for its end and says why.
func (u *upstream) connect(ctx context.Context, n int) (*generation, func() error, error) {
	if u.cfg.URL != "" {
		return u.connectURL(ctx, n)
	}
	return u.connectCommand(ctx, n)
}

// connectCommand starts the command in a process group of its own (npx and
// its node child end together) with the minimal environment.
func (u *upstream) connectCommand(ctx context.Context, n int) (*generation, func() error, error) {
	cmd := exec.Command(u.cfg.Command[0], u.cfg.Command[1:]...)
	cmd.Env = upstreamEnv(u.cfg, os.LookupEnv)
	cmd.Dir = u.cfg.Dir
	cmd.Stderr = u.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("cannot start %q: %w", u.cfg.Command[0], err)
	}
	killGroup := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// The initialization is bounded by StartTimeout: a process that does
	// not answer it is killed, which ends Connect.
	watchdog := time.AfterFunc(u.cfg.StartTimeout, killGroup)
	session, err := u.client.Connect(context.WithoutCancel(ctx),
		&mcp.IOTransport{Reader: &progressReader{r: stdout, saw: u.sawProgress}, Writer: stdin}, nil)
	stoppedByWatchdog := !watchdog.Stop()
	if err != nil {
		killGroup()
		exit := <-exited
		switch {
		case stoppedByWatchdog:
			err = fmt.Errorf("it did not complete MCP initialization within %v (upstream.start_timeout): %w", u.cfg.StartTimeout, err)
		case exit != nil:
			err = fmt.Errorf("it exited (%v) before MCP initialization completed: %w", exit, err)
		}
		return nil, nil, err
	}
	g := &generation{n: n, session: session, pid: cmd.Process.Pid, ended: make(chan struct{})}
	wait := func() error {
		sessionEnded := make(chan error, 1)
		go func() { sessionEnded <- session.Wait() }()
		pingFailed := u.pings(ctx, session)
		var why error
		select {
		case err := <-exited:
			why = fmt.Errorf("the upstream process exited: %v", exitText(err))
			exited <- err
		case err := <-sessionEnded:
			sessionEnded <- err
			// A process that dies closes its stdout first: its exit,
			// which says more, follows closely.
			select {
			case exit := <-exited:
				why = fmt.Errorf("the upstream process exited: %v", exitText(exit))
				exited <- exit
			case <-time.After(500 * time.Millisecond):
				why = fmt.Errorf("the upstream's MCP connection failed: %v", orText(err, "closed"))
			}
		case err := <-pingFailed:
			why = err
		case <-ctx.Done():
			why = errors.New("the proxy is shutting down")
			_ = session.Close() // closes stdin: a well-behaved server exits
			select {
			case err := <-exited:
				exited <- err
			case <-time.After(2 * time.Second):
			}
		}
		killGroup()
		<-exited
		_ = session.Close()
		<-sessionEnded
		return why
	}
	return g, wait, nil
}

// connectURL opens an MCP session to the URL.
func (u *upstream) connectURL(ctx context.Context, n int) (*generation, func() error, error) {
	// Progress is counted, and the requests to a client marked with their
	// call (route.go), as the bytes come off each stream.
	hc := &http.Client{Transport: progressRoundTripper{next: routeRoundTripper{next: http.DefaultTransport}, saw: u.sawProgress}}
	var t mcp.Transport = &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: hc}
	if u.cfg.Transport == "sse" {
		t = &mcp.SSEClientTransport{Endpoint: u.cfg.URL, HTTPClient: hc}
	}
	// The SSE transport's stream lives in Connect's context: it must last
	// as long as the generation, and the start's bound is a timer on it.
	gctx, cancel := context.WithCancel(ctx)
	watchdog := time.AfterFunc(u.cfg.StartTimeout, cancel)
	session, err := u.client.Connect(gctx, t, nil)
	if !watchdog.Stop() && err != nil {
		err = fmt.Errorf("it did not complete MCP initialization within %v (upstream.start_timeout): %w", u.cfg.StartTimeout, err)
	}
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("cannot connect to %s: %w", u.cfg.URL, err)
	}
	g := &generation{n: n, session: session, ended: make(chan struct{})}
	wait := func() error {
		sessionEnded := make(chan error, 1)
		go func() { sessionEnded <- session.Wait() }()
		pingFailed := u.pings(ctx, session)
		var why error
		select {
		case err := <-sessionEnded:
			why = fmt.Errorf("the upstream's MCP session ended: %v", orText(err, "closed"))
			sessionEnded <- err
		case err := <-pingFailed:
			why = err
		case <-ctx.Done():
			why = errors.New("the proxy is shutting down")
		}
		_ = session.Close()
		<-sessionEnded
		cancel()
		return why
	}
	return g, wait, nil
}

// pings pings the upstream every PingInterval; the channel gets an error
// when a ping was not answered within PingTimeout. An answer that is an
// error (a server without ping) is an answer. The pinging stops when the
// session ends or ctx does.
func (u *upstream) pings(ctx context.Context, s *mcp.ClientSession) <-chan error {
	failed := make(chan error, 1)
	if u.cfg.PingInterval <= 0 {
		return failed
	}
	go func() {
		t := time.NewTicker(u.cfg.PingInterval)
		defer t.Stop()
		ended := make(chan struct{})
		go func() { _ = s.Wait(); close(ended) }()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ended:
				return
			case <-t.C:
			}
			pctx, cancel := context.WithTimeout(ctx, u.cfg.PingTimeout)
			err := s.Ping(pctx, nil)
			timedOut := pctx.Err() != nil
			cancel()
			var wire *jsonrpc.Error
			if err != nil && timedOut && !errors.As(err, &wire) && ctx.Err() == nil {
				failed <- fmt.Errorf("the upstream did not answer a ping within %v (upstream.ping_timeout): it is taken for hung", u.cfg.PingTimeout)
				return
			}
		}
	}()
	return failed
}

// exitText describes how a process ended.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func orText(err error, s string) string {
	if err == nil {
		return s
	}
	return err.Error()
}

// minimalEnv are the variables of the proxy's environment every upstream
// command gets: what finding programs, a home directory and the locale
// need, and where the TLS trust store is (paths, not secrets: without them
// npx cannot reach a registry behind a TLS-inspecting proxy). Anything else
// (the audit DSN, tokens, HTTP proxies, which may hold credentials,
// whatever the operator exported) stays with the proxy unless
// upstream.pass_env names it.
var minimalEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"}

// upstreamEnv is the command's environment: minimalEnv and pass_env from
// lookup (the proxy's environment), then env's literal values.
func upstreamEnv(cfg UpstreamConfig, lookup func(string) (string, bool)) []string {
	vals := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, k := range append(append([]string(nil), minimalEnv...), cfg.PassEnv...) {
		if v, ok := lookup(k); ok {
			set(k, v)
		}
	}
	for k, v := range cfg.Env {
		set(k, v)
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vals[k])
	}
	return env
}
