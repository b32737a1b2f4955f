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
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/serve"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// flags is what the command line says; a flag given overrides the
// configuration file's field.
type flags struct {
	addr      string
	stdio     bool
	stateless bool
	audit     serve.AuditConfig // the audit flags, as every command has them (package serve)
	config    string
	upstream  string
	shutdown  time.Duration
	set       map[string]bool // the flags given
	command   []string        // after "--"
}

// usageError is a bad command line or configuration: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

const usage = `usage: toolmw-proxy [flags] -- command [args...]   (an upstream started over stdio)
       toolmw-proxy [flags] -upstream URL              (a streamable HTTP upstream)`

func parseFlags(args []string, stderr io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("toolmw-proxy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8081", "listen `address` for streamable HTTP at /mcp (host:port; port 0 picks a free one)")
	fs.BoolVar(&f.stdio, "stdio", false, "serve MCP over stdin/stdout instead of HTTP (logs go to stderr)")
	fs.BoolVar(&f.stateless, "stateless", false, "stateless streamable HTTP (no Mcp-Session-Id)")
	serve.AddAuditFlags(fs, &f.audit) // -audit-db, -audit-postgres, -audit-table, -audit-spool, -audit-durability, -otlp-logs-endpoint
	fs.StringVar(&f.config, "config", "", "configuration `file` (YAML or JSON; see the package documentation)")
	fs.StringVar(&f.upstream, "upstream", "", "the upstream's streamable HTTP `URL` (instead of a command after --)")
	fs.DurationVar(&f.shutdown, "shutdown-timeout", 10*time.Second, "how long calls in flight may run after SIGINT/SIGTERM before they are cancelled")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, usage)
			fs.PrintDefaults()
			return f, err
		}
		return f, usageError{err.Error() + " (run with -h to list the flags)"}
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	f.command = fs.Args()
	if len(f.command) > 0 && !slicesContains(args, "--") {
		return f, usageError{fmt.Sprintf("unexpected argument %q: put the upstream command after -- (toolmw-proxy -- npx -y server)", f.command[0])}
	}
	if f.shutdown <= 0 {
		return f, usageError{fmt.Sprintf("-shutdown-timeout must be positive, not %v", f.shutdown)}
	}
	return f, nil
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// settings merges the configuration file with the flags, and checks what
// only the two together can say.
func settings(f flags) (*Config, serve.AuditConfig, error) {
	cfg := &Config{}
	if f.config != "" {
		c, err := loadConfig(f.config)
		if err != nil {
			return nil, serve.AuditConfig{}, usageError{err.Error()}
		}
		cfg = c
	}
	if len(f.command) > 0 {
		cfg.Upstream.Command = f.command
		cfg.Upstream.URL = ""
	}
	if f.set["upstream"] {
		if len(f.command) > 0 {
			return nil, serve.AuditConfig{}, usageError{"give the upstream as -upstream URL or as a command after --, not both"}
		}
		cfg.Upstream.URL, cfg.Upstream.Command = f.upstream, nil
		if u, err := url.Parse(f.upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, serve.AuditConfig{}, usageError{fmt.Sprintf("-upstream must be an http:// or https:// URL, not %q", f.upstream)}
		}
	}
	if len(cfg.Upstream.Command) == 0 && cfg.Upstream.URL == "" {
		return nil, serve.AuditConfig{}, usageError{"no upstream: put its command after -- (toolmw-proxy -- npx -y @modelcontextprotocol/server-everything), or pass -upstream URL"}
	}
	ac, err := auditSettings(f, cfg.Audit)
	if err != nil {
		return nil, serve.AuditConfig{}, err
	}
	if !f.stdio && !isLoopbackAddr(f.addr) && len(cfg.Auth.Tokens) == 0 {
		return nil, serve.AuditConfig{}, usageError{fmt.Sprintf("-addr %s is not a loopback address: configure auth.tokens first (the proxy does not serve unauthenticated clients beyond this machine)", f.addr)}
	}
	cfg.withDefaults()
	return cfg, ac, nil
}

// auditSettings is the audit store the flags and the file's audit section
// name together: a flag given overrides its field of the file.
func auditSettings(f flags, file AuditConfig) (serve.AuditConfig, error) {
	ac := f.audit
	ac.Settings = serve.AuditSettings{SQLite: "-audit-db or audit.sqlite", Postgres: "-audit-postgres or audit.postgres_env",
		Table: "-audit-table or audit.table", Spool: "-audit-spool or audit.spool", OTLPLogs: "-otlp-logs-endpoint or audit.otlp_logs"}
	if !f.set["audit-db"] && file.SQLite != "" {
		ac.SQLite = file.SQLite
	}
	if !f.set["audit-postgres"] && file.PostgresEnv != "" {
		ac.Postgres = os.Getenv(file.PostgresEnv)
		if ac.Postgres == "" {
			return ac, usageError{fmt.Sprintf("audit.postgres_env names $%s, which is empty", file.PostgresEnv)}
		}
	}
	if !f.set["audit-table"] && file.Table != "" {
		ac.Table = file.Table
	}
	if !f.set["audit-spool"] && file.Spool != "" {
		ac.Spool = file.Spool
	}
	if !f.set["otlp-logs-endpoint"] && file.OTLPLogs != "" {
		ac.OTLPLogs = file.OTLPLogs
	}
	if !f.set["audit-durability"] && file.Durability != "" {
		ac.Durability, _ = serve.ParseDurability(file.Durability) // checked by the file's validator
	}
	if err := ac.Check(); err != nil {
		return ac, usageError{err.Error()}
	}
	return ac, nil
}

// fail prints the one-line error the operator reads, and returns the status.
func fail(stderr io.Writer, code int, format string, args ...any) int {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	fmt.Fprintln(stderr, "toolmw-proxy: "+msg)
	return code
}

// failStarting reports a startup step's error, unless SIGINT or SIGTERM
// came first: the listener opens before the audit store and the upstream,
// so the proxy can be stopped while they are still starting, and an
// interrupted start is the stop asked for, not a failure.
func failStarting(ctx context.Context, stderr io.Writer, format string, args ...any) int {
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "toolmw-proxy: stopped while starting; no call was served")
		return 0
	}
	return fail(stderr, 1, format, args...)
}

// run is the whole proxy: it returns the process's exit status. It serves
// until ctx ends (SIGINT/SIGTERM in main) or, with -stdio, until the client
// closes stdin.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return fail(stderr, 2, "%v", err)
	}
	cfg, ac, err := settings(f)
	if err != nil {
		return fail(stderr, 2, "%v", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	sdkLogger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	var ln net.Listener
	if !f.stdio {
		if ln, err = net.Listen("tcp", f.addr); err != nil {
			return fail(stderr, 1, "cannot listen on %s: %v (pass -addr with another host:port)", f.addr, err)
		}
		defer ln.Close()
	}
	al, err := serve.OpenAudit(ctx, ac, logger)
	if err != nil {
		return failStarting(ctx, stderr, "%v", err)
	}
	defer al.Close()
	outer, closeTelemetry, err := telemetry(ctx, cfg.Telemetry)
	if err != nil {
		return failStarting(ctx, stderr, "%v", err)
	}
	defer closeTelemetry(logger)

	calls := serve.NewInFlight()
	defer calls.Cancel()
	transport := toolctx.TransportUnknown // streamable HTTP is detected per call
	if f.stdio {
		transport = toolctx.TransportStdio
	}
	p := newProxy(logger)
	p.httpUpstream = cfg.Upstream.URL != "" && cfg.Upstream.Transport != "sse"
	p.resumeTimeout, p.maxParked = cfg.Bridge.ResumeTimeout, cfg.Bridge.MaxParked
	p.rows = al.Emitter()
	access := accessGuard(cfg)
	if access != nil {
		p.visibleTo = middleware.Visibility(access)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolmw-proxy", Version: "0.2.0"}, p.clientOptions(sdkLogger))
	client.AddReceivingMiddleware(p.listRoots)
	onStart := func(ctx context.Context, g *generation) error {
		if p.server.Load() == nil {
			// The first generation's capabilities are the proxy's.
			s := mcp.NewServer(serverInfo(g.session.InitializeResult()), p.serverOptions(g.session.InitializeResult(), sdkLogger))
			s.AddReceivingMiddleware(p.forward)
			mcpsdk.Install(s, chain(cfg, al.Emitter(), logger, access, append(outer, calls.Track)...).Middleware(),
				mcpsdk.WithTransport(transport), mcpsdk.WithFallbackLogger(logger))
			p.server.Store(s)
		}
		return p.syncTools(ctx, g.session)
	}
	up, err := startUpstream(cfg.Upstream, client, logger, stderr, onStart, p.sawProgress)
	if err != nil {
		return failStarting(ctx, stderr, "the upstream %s did not start: %v", describeUpstream(cfg.Upstream), err)
	}
	p.up = up
	defer up.Close()
	defer p.closeBridge() // before the upstream closes: its parked calls end first

	if f.stdio {
		return serveStdio(ctx, p.server.Load(), calls, f.shutdown, al.Where(), logger, stdin, stdout, stderr)
	}
	return serveHTTP(ctx, ln, p.server.Load(), cfg, f, calls, al, logger, sdkLogger, stderr)
}

func describeUpstream(u UpstreamConfig) string {
	if u.URL != "" {
		return u.URL
	}
	return fmt.Sprintf("%q", strings.Join(u.Command, " "))
}

// serverInfo is what the proxy tells its clients it is: the upstream's
// name and version, through toolmw-proxy.
func serverInfo(init *mcp.InitializeResult) *mcp.Implementation {
	impl := &mcp.Implementation{Name: "toolmw-proxy", Version: "0.2.0"}
	if init != nil && init.ServerInfo != nil {
		impl.Name = init.ServerInfo.Name + " (via toolmw-proxy)"
		impl.Version = init.ServerInfo.Version
		impl.Title = init.ServerInfo.Title
	}
	return impl
}

// telemetry starts the OTLP trace export the configuration asks for, and
// returns the chain's OpenTelemetry interceptor (none without it).
func telemetry(ctx context.Context, c TelemetryConfig) ([]toolctx.Middleware, func(*slog.Logger), error) {
	if c.OTLPEndpoint == "" {
		return nil, func(*slog.Logger) {}, nil
	}
	endpoint := c.OTLPEndpoint
	if u, err := url.Parse(endpoint); err == nil && (u.Path == "" || u.Path == "/") {
		u.Path = "/v1/traces"
		endpoint = u.String()
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot start the OTLP trace exporter for %s: %w", c.OTLPEndpoint, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("toolmw-proxy"))))
	closeTP := func(logger *slog.Logger) {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			logger.Error("flushing the spans", "err", err)
		}
	}
	mw, err := otelmw.New(otelmw.WithTracerProvider(tp),
		otelmw.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
	if err != nil {
		closeTP(slog.Default())
		return nil, nil, err
	}
	return []toolctx.Middleware{mw}, closeTP, nil
}

// serveStdio serves one MCP session over stdin/stdout until the client
// closes stdin or ctx ends.
func serveStdio(ctx context.Context, server *mcp.Server, calls *serve.InFlight, grace time.Duration, where string,
	logger *slog.Logger, stdin io.Reader, stdout, stderr io.Writer) int {
	logger.Info("toolmw-proxy on stdio", "audit", where)
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
	ss, err := server.Connect(context.WithoutCancel(ctx), mcpsdk.GuardTransport(t, mcpsdk.WithFallbackLogger(logger)), nil)
	if err != nil {
		return fail(stderr, 1, "stdio: %v", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ended:
	case <-ctx.Done():
		logger.Info("shutting down: waiting for in-flight calls", "timeout", grace)
		waitIdle(calls.Running, grace)
		calls.Cancel()
		_ = ss.Close()
		select {
		case <-ended:
		case <-time.After(2 * time.Second):
			logger.Warn("shutting down: the stdio session did not close in time")
		}
	}
	return 0
}

// serveHTTP serves streamable HTTP at /mcp (and HTTP+SSE at /sse) with the
// demo's HTTP stack (package stack), behind the Host and Origin checks and,
// when configured, bearer authentication.
func serveHTTP(ctx context.Context, ln net.Listener, server *mcp.Server, cfg *Config, f flags, calls *serve.InFlight,
	al *serve.AuditLog, logger, sdkLogger *slog.Logger, stderr io.Writer) int {
	const writeTimeout = 10 * time.Minute // the calls' own deadlines come first
	var active atomic.Int64
	o := serve.HTTPConfig{Name: "toolmw-proxy", Server: server, Audit: al.Emitter(), Logger: logger, SDKLogger: sdkLogger, Stateless: f.stateless,
		SessionIdle: cfg.HTTP.SessionIdle, MaxSessions: cfg.HTTP.MaxSessions, WriteTimeout: writeTimeout, Active: &active}
	if len(cfg.Auth.Tokens) > 0 {
		o.Authenticate = httpmw.Authenticate(tokenVerifier(cfg.Auth.Tokens), httpmw.WithDiagnostics(serve.Diagnostics(logger)),
			httpmw.WithFallbackLogger(logger), httpmw.WithRealm("toolmw-proxy"))
	}
	h, err := serve.Handler(o)
	if err != nil {
		return fail(stderr, 1, "%v", err)
	}
	srv := &http.Server{
		Handler:           originCheck(ln.Addr().String(), cfg.HTTP.AllowedHosts, cfg.HTTP.AllowedOrigins)(h),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	mode := "stateful"
	if f.stateless {
		mode = "stateless"
	}
	logger.Info("toolmw-proxy: serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "mode", mode,
		"upstream", describeUpstream(cfg.Upstream), "audit", al.Where())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(stderr, 1, "serving on %s: %v", ln.Addr(), err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: waiting for in-flight calls", "timeout", f.shutdown)
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdown+5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	waitIdle(active.Load, f.shutdown)
	calls.Cancel()
	waitIdle(active.Load, 2*time.Second)
	for ss := range server.Sessions() {
		_ = ss.Close()
	}
	select {
	case <-shut:
	case <-time.After(2 * time.Second):
		_ = srv.Close()
	}
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
