package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/examples/server/stack"
	"github.com/toolmw/toolmw/serve"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// PostgresEnv is the environment variable that may hold the audit store's
// PostgreSQL DSN instead of -audit-postgres.
const PostgresEnv = "TOOLMW_AUDIT_POSTGRES"

type config struct {
	addr            string
	stdio           bool
	stateless       bool
	audit           serve.AuditConfig
	logFile         string
	slowTimeout     time.Duration
	shutdownTimeout time.Duration
	readTimeout     time.Duration
	writeTimeout    time.Duration
	idleTimeout     time.Duration
	sessionIdle     time.Duration
	maxSessions     int
	telemetry       telemetryConfig // telemetry.go
	fleet           fleetConfig     // fleet.go
	access          accessConfig    // access.go
}

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func newFlagSet(cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "listen `address` for streamable HTTP (host:port; port 0 picks a free one)")
	fs.BoolVar(&cfg.stdio, "stdio", false, "serve MCP over stdin/stdout instead of HTTP (logs go to stderr)")
	fs.BoolVar(&cfg.stateless, "stateless", false, "stateless streamable HTTP (no Mcp-Session-Id, no server-to-client requests)")
	// The audit store, its spool, -audit-durability and
	// -otlp-logs-endpoint: the same flags as every toolmw command that
	// serves calls (package serve).
	serve.AddAuditFlags(fs, &cfg.audit)
	fs.Lookup("audit-postgres").Usage += "; also $" + PostgresEnv
	cfg.audit.Settings = serve.AuditSettings{Postgres: "-audit-postgres or $" + PostgresEnv}
	fs.StringVar(&cfg.logFile, "log-file", "", "also write the log as JSON lines to this `file` (appended; stderr keeps the text lines)")
	fs.DurationVar(&cfg.slowTimeout, "slow-timeout", 2*time.Second, "deadline of the slow tool (the Timeout interceptor)")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long in-flight calls may run after SIGINT/SIGTERM before they are cancelled")
	fs.DurationVar(&cfg.readTimeout, "read-timeout", 30*time.Second, "how long an HTTP client may take to send a whole request, headers and body")
	fs.DurationVar(&cfg.writeTimeout, "write-timeout", time.Minute, "how long the server may take to answer an HTTP request once it is read: longer than -slow-timeout (by default the larger of 1m and -slow-timeout plus 30s); the session's GET stream is not bound by it")
	fs.DurationVar(&cfg.idleTimeout, "idle-timeout", 2*time.Minute, "how long an idle keep-alive HTTP connection stays open")
	fs.DurationVar(&cfg.sessionIdle, "session-idle-timeout", 5*time.Minute, "how long a stateful session may go without a request before the server closes it (its client must then start a new one)")
	addTelemetryFlags(fs, &cfg.telemetry)
	addFleetFlags(fs, &cfg.fleet)
	addAccessFlags(fs, &cfg.access)
	fs.IntVar(&cfg.maxSessions, "max-sessions", 1000, "the most stateful sessions open at once; a client that would open one more gets HTTP 503 (no limit with -stateless, where no session outlives its request)")
	return fs
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := newFlagSet(&cfg)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: go run ./examples/server [flags]")
			fs.PrintDefaults()
			return cfg, err
		}
		return cfg, usageError{err.Error() + " (run with -h to list the flags)"}
	}
	if fs.NArg() > 0 {
		return cfg, usageError{fmt.Sprintf("unexpected argument %q: the server takes flags only (run with -h to list them)", fs.Arg(0))}
	}
	if cfg.slowTimeout <= 0 {
		return cfg, usageError{fmt.Sprintf("-slow-timeout must be positive, not %v", cfg.slowTimeout)}
	}
	if cfg.shutdownTimeout <= 0 {
		return cfg, usageError{fmt.Sprintf("-shutdown-timeout must be positive, not %v", cfg.shutdownTimeout)}
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"-read-timeout", cfg.readTimeout}, {"-write-timeout", cfg.writeTimeout}, {"-idle-timeout", cfg.idleTimeout},
		{"-session-idle-timeout", cfg.sessionIdle}} {
		if f.d <= 0 {
			return cfg, usageError{fmt.Sprintf("%s must be positive, not %v", f.name, f.d)}
		}
	}
	if cfg.maxSessions < 1 {
		return cfg, usageError{fmt.Sprintf("-max-sessions must be at least 1, not %d", cfg.maxSessions)}
	}
	writeSet := false
	fs.Visit(func(f *flag.Flag) { writeSet = writeSet || f.Name == "write-timeout" })
	if !writeSet {
		cfg.writeTimeout = max(time.Minute, cfg.slowTimeout+30*time.Second)
	}
	if cfg.writeTimeout <= cfg.slowTimeout {
		return cfg, usageError{fmt.Sprintf("-write-timeout (%v) must be longer than -slow-timeout (%v), or the slow tool's answer would be cut off", cfg.writeTimeout, cfg.slowTimeout)}
	}
	if cfg.audit.Postgres == "" {
		cfg.audit.Postgres = os.Getenv(PostgresEnv)
	}
	if err := cfg.audit.Check(); err != nil {
		return cfg, usageError{err.Error()}
	}
	if err := cfg.telemetry.check(); err != nil {
		return cfg, err
	}
	if err := cfg.fleet.check(); err != nil {
		return cfg, err
	}
	if err := cfg.access.check(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// failStarting reports a startup step's error, unless SIGINT or SIGTERM
// came first: the listener is open before the audit store, so a client (or
// a test) can see the port and stop the server while the store is still
// opening, and an interrupted open is the stop asked for, not a failure.
func failStarting(ctx context.Context, stderr io.Writer, err error) int {
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "toolmw demo server: stopped while starting; no call was served")
		return 0
	}
	return fail(stderr, 1, "%v", err)
}

// fail prints the one-line error the operator reads, and returns the status.
func fail(stderr io.Writer, code int, format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	msg = strings.Join(strings.Fields(msg), " ") // one line, whatever the cause's text holds
	fmt.Fprintln(stderr, "toolmw demo server: "+msg)
	return code
}

// run is the whole server: it returns the process's exit status. It serves
// until ctx ends (SIGINT/SIGTERM in main) or, with -stdio, until the client
// closes stdin.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return fail(stderr, 2, "%v", err)
	}
	logs, err := newLogs(stderr, cfg.logFile)
	if err != nil {
		return fail(stderr, 1, "%v", err)
	}
	defer logs.Close()
	logger := logs.logger

	// Listen first, so that a busy address is reported before anything
	// else is opened.
	var ln net.Listener
	if !cfg.stdio {
		ln, err = net.Listen("tcp", cfg.addr)
		if err != nil {
			hint := "pass -addr with another host:port"
			if errors.Is(err, syscall.EADDRINUSE) {
				hint = "another process is using it: stop it or pass -addr with another port, e.g. -addr 127.0.0.1:8081"
			}
			return fail(stderr, 1, "cannot listen on %s: %v (%s)", cfg.addr, err, hint)
		}
		defer ln.Close()
	}

	// Then the metrics listener, for the same reason, and before the audit
	// log, whose writer logs its stats when it closes: a startup error is
	// one line.
	banner := stdout
	if cfg.stdio {
		banner = stderr // stdout is the MCP stream
	}
	tel, err := startTelemetry(ctx, cfg.telemetry, banner, logger)
	if err != nil {
		return failStarting(ctx, stderr, err)
	}
	defer tel.close() // after serving: flushes the spans of the last calls

	al, err := serve.OpenAudit(ctx, cfg.audit, logger)
	if err != nil {
		return failStarting(ctx, stderr, err)
	}
	defer al.Close()

	guardStore, err := openRedis(cfg.fleet, logger)
	if err != nil {
		return failStarting(ctx, stderr, err)
	}
	if guardStore != nil {
		defer guardStore.Close()
	}

	calls := serve.NewInFlight()
	defer calls.Cancel()
	d := &demo{cfg: cfg, w: al.Emitter(), calls: calls, tel: tel, logger: logger, sdkLogger: logs.sdkLogger,
		where: al.Where(), stdin: stdin, stdout: stdout, stderr: stderr,
		guards: cfg.fleet.guards(guardStore, logger, cfg.slowTimeout, cfg.access.maybeObserve)}
	if d.server, err = d.newServer(); err != nil {
		return fail(stderr, 1, "%v", err)
	}
	if cfg.stdio {
		return d.serveStdio(ctx)
	}
	return d.serveHTTP(ctx, ln)
}

// demo is what building and serving the MCP server need once the listener
// and the audit store are open.
type demo struct {
	cfg       config
	server    *mcp.Server
	w         audit.Emitter
	calls     *serve.InFlight
	tel       *telemetry
	logger    *slog.Logger         // the operator's: diagnostics and shutdown
	sdkLogger *slog.Logger         // the SDK's, from warnings up
	where     string               // the audit store, for the banner
	guards    []toolctx.Middleware // fleet.go
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
}

// newServer builds the go-sdk server with the demo tools behind the chain
// (package stack), telemetry and the tracking of calls in flight outside it.
func (d *demo) newServer() (*mcp.Server, error) {
	transport := toolctx.TransportUnknown // streamable HTTP is detected per call
	if d.cfg.stdio {
		transport = toolctx.TransportStdio
	}
	server, err := stack.NewServer(stack.ServerConfig{Audit: d.w, Logger: d.logger, SDKLogger: d.sdkLogger,
		SlowTimeout: d.cfg.slowTimeout, Transport: transport, Outer: []toolctx.Middleware{d.tel.middleware(), d.calls.Track},
		Guards: d.guards, Access: d.cfg.access.guard()})
	if err != nil {
		return nil, err
	}
	return server, d.tel.recordSessions(server, d.cfg.stdio, d.cfg.stateless) // session_metric.go
}

// serveHTTP serves streamable HTTP until ctx ends, then shuts down
// gracefully: no new connections, in-flight requests finish (or are cancelled
// after -shutdown-timeout), sessions are closed.
func (d *demo) serveHTTP(ctx context.Context, ln net.Listener) int {
	var active atomic.Int64 // requests other than the long-lived GET streams
	handler, err := serve.Handler(serve.HTTPConfig{Name: "toolmw demo", Server: d.server, Audit: d.w, Logger: d.logger, SDKLogger: d.sdkLogger,
		Stateless: d.cfg.stateless, SessionIdle: d.cfg.sessionIdle, MaxSessions: d.cfg.maxSessions,
		WriteTimeout: d.cfg.writeTimeout, Active: &active, Authenticate: d.cfg.access.authenticate(d.logger)})
	if err != nil {
		return fail(d.stderr, 1, "%v", err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// deadlines() restarts a POST's write deadline once its body is in
		// and lifts it from the session's GET stream.
		ReadTimeout:  d.cfg.readTimeout,
		WriteTimeout: d.cfg.writeTimeout,
		IdleTimeout:  d.cfg.idleTimeout,
		ErrorLog:     slog.NewLogLogger(d.logger.Handler(), slog.LevelWarn),
		BaseContext:  func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}

	url := "http://" + ln.Addr().String() + "/mcp"
	mode := "stateful"
	if d.cfg.stateless {
		mode = "stateless"
	}
	fmt.Fprintf(d.stdout, "toolmw demo server: MCP over streamable HTTP (%s) at %s\n", mode, url)
	fmt.Fprintf(d.stdout, "  and over HTTP+SSE (the 2024-11-05 transport) at %s\n", strings.TrimSuffix(url, "/mcp")+"/sse")
	fmt.Fprintf(d.stdout, "audit log: %s; diagnostics: stderr\n", d.where)
	fmt.Fprintf(d.stdout, "try it:\n  go run ./examples/client -url %s\n", url)
	table := ""
	if d.cfg.audit.Table != "" {
		table = " -table " + d.cfg.audit.Table
	}
	if strings.HasPrefix(d.where, "SQLite ") {
		fmt.Fprintf(d.stdout, "  go run ./examples/audit -db %s%s\n", strings.TrimPrefix(d.where, "SQLite "), table)
	} else {
		fmt.Fprintf(d.stdout, "  go run ./examples/audit -postgres \"$%s\"%s\n", PostgresEnv, table)
	}
	fmt.Fprintln(d.stdout, "stop it with Ctrl-C")

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(d.stderr, 1, "serving on %s: %v", d.cfg.addr, err)
	case <-ctx.Done():
	}

	d.logger.Info("shutting down: waiting for in-flight calls", "timeout", d.cfg.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), d.cfg.shutdownTimeout+5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	// Shutdown waits for every request, and a stateful session's GET stream
	// never ends on its own: wait for the other requests (the calls), cancel
	// those still running after the grace period, then close the sessions,
	// which ends the streams.
	waitIdle(active.Load, d.cfg.shutdownTimeout)
	if active.Load() > 0 {
		d.logger.Warn("shutting down: cancelling the calls still running", "requests", active.Load())
		d.calls.Cancel()
		waitIdle(active.Load, 2*time.Second)
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for ss := range d.server.Sessions() {
			_ = ss.Close()
		}
	}()
	err = nil
	select {
	case <-closed:
		select {
		case err = <-shut:
		case <-time.After(time.Second):
			err = context.DeadlineExceeded
		}
	case <-time.After(2 * time.Second): // a handler that ignores its context
		err = context.DeadlineExceeded
	}
	if err != nil {
		d.logger.Warn("shutting down: closing the connections still open", "err", err)
		_ = srv.Close()
	}
	d.logger.Info("shutting down: flushing the audit log")
	return 0
}

// serveStdio serves one MCP session over stdin/stdout until the client
// closes stdin or ctx ends. On SIGINT/SIGTERM it shuts down as the HTTP
// server does: the calls in flight may finish within -shutdown-timeout,
// those still running are then cancelled, and the session is closed.
func (d *demo) serveStdio(ctx context.Context) int {
	d.logger.Info("toolmw demo server on stdio", "audit", d.where)
	t := &mcp.IOTransport{Reader: io.NopCloser(d.stdin), Writer: nopWriteCloser{d.stdout}}
	// The session's context is not the signal's: a signal must not cancel
	// the calls in flight before their grace period (calls.Cancel does, after).
	// GuardTransport: a line go-sdk cannot decode is answered with a fixed
	// error, not its decoder's text, and the session stays up.
	ss, err := d.server.Connect(context.WithoutCancel(ctx), mcpsdk.GuardTransport(t, mcpsdk.WithFallbackLogger(d.logger)), nil)
	if err != nil {
		return fail(d.stderr, 1, "stdio: %v", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		if err != nil && !errors.Is(err, io.EOF) {
			d.logger.Info("stdio session ended", "err", err)
		}
	case <-ctx.Done():
		d.logger.Info("shutting down: waiting for in-flight calls", "timeout", d.cfg.shutdownTimeout)
		waitIdle(d.calls.Running, d.cfg.shutdownTimeout)
		if d.calls.Running() > 0 {
			d.logger.Warn("shutting down: cancelling the calls still running", "calls", d.calls.Running())
			d.calls.Cancel()
			waitIdle(d.calls.Running, 2*time.Second)
		}
		_ = ss.Close()
		select {
		case <-ended:
		case <-time.After(2 * time.Second): // a handler that ignores its context
			d.logger.Warn("shutting down: the stdio session did not close in time")
		}
	}
	d.logger.Info("shutting down: flushing the audit log")
	return 0
}

// waitIdle waits until n() is zero, for d at most.
func waitIdle(n func() int64, d time.Duration) {
	deadline := time.Now().Add(d)
	for n() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
