package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// FakeDSN is in the native handler's raw error: never sent to the client.
const FakeDSN = "postgres://reporting:hunter2@db-7.internal.example:5432/sales"

type orderIn struct {
	ID int `json:"id"`
}

type orderOut struct {
	ID     int    `json:"id"`
	Status string `json:"status"`
}

func lookupOrder(ctx context.Context, req *toolctx.Request, in orderIn) (orderOut, error) {
	switch in.ID {
	case 1:
		return orderOut{ID: 1, Status: "shipped"}, nil
	case 13:
		panic("order 13 is cursed")
	}
	return orderOut{}, errs.NotFound(fmt.Sprintf("order %d does not exist", in.ID)).
		WithDetail(map[string]any{"id": in.ID})
}

// salesReport is an existing mcp-go handler, registered natively.
func salesReport(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("dial %s: connection refused", FakeDSN)
}

func slowTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	select {
	case <-time.After(5 * time.Second):
		return mcp.NewToolResultText("done"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// NewServer builds the mcp-go server with the chain installed first, so that
// it is the outermost tool middleware.
func NewServer(rows audit.Emitter, diag middleware.DiagnosticsFunc) (*server.MCPServer, error) {
	chain := middleware.New(
		audit.Interceptor(rows),
		middleware.Diagnostics(diag),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.When(middleware.Tools("slow"), middleware.Timeout(100*time.Millisecond)),
	)
	s := server.NewMCPServer("toolmw-mcpgo-demo", "0.1.0",
		mcpgo.ServerOption(chain.Middleware()),
		server.WithInputSchemaValidation(),
	)
	// Native mcp-go handlers, unchanged.
	s.AddTool(mcp.NewTool("sales_report", mcp.WithString("region")), salesReport)
	s.AddTool(mcp.NewTool("slow"), slowTool)
	// A toolmw typed handler, checked at registration.
	err := mcpgo.AddTool(s, mcp.NewTool("lookup_order",
		mcp.WithDescription("Looks up an order; only order 1 exists."),
		mcp.WithNumber("id", mcp.Required())), toolctx.Typed(lookupOrder))
	return s, err
}

type config struct {
	addr, client     string
	stdio, sse, tour bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("mcpgo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8081", "listen `address` for HTTP (host:port; port 0 picks a free one)")
	fs.BoolVar(&cfg.stdio, "stdio", false, "serve MCP over stdin/stdout instead of HTTP (logs go to stderr)")
	fs.BoolVar(&cfg.sse, "sse", false, "serve (or, with -client, call) the SSE transport, at /sse, instead of streamable HTTP at /mcp")
	fs.StringVar(&cfg.client, "client", "", "do not serve: call every tool of the server at this `URL` with mcp-go's client, and print what it got")
	fs.BoolVar(&cfg.tour, "tour", false, "do not serve: run the server and mcp-go's in-process client in this process, and print what each saw")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: go run ./examples/mcpgo [flags]")
			fs.PrintDefaults()
		}
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q: flags only (run with -h to list them)", fs.Arg(0))
	}
	modes := 0
	for _, on := range []bool{cfg.stdio, cfg.client != "", cfg.tour} {
		if on {
			modes++
		}
	}
	if modes > 1 || (cfg.stdio && cfg.sse) || (cfg.tour && cfg.sse) {
		return cfg, errors.New("pick one of -stdio, -sse, -client URL (with or without -sse) and -tour")
	}
	return cfg, nil
}

// run is the whole program: it returns the exit status. A server serves
// until ctx ends (SIGINT/SIGTERM) or, with -stdio, until stdin closes.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "mcpgo:", err, "(run with -h to list the flags)")
		return 2
	}
	switch {
	case cfg.tour:
		err = runTour(ctx, stdout)
	case cfg.client != "":
		err = runClient(ctx, cfg, stdout)
	default:
		err = serve(ctx, cfg, stdin, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "mcpgo:", err)
		return 1
	}
	return 0
}

// serve serves the tools over the transport cfg names. The audit rows
// and the diagnostics go to stderr.
func serve(ctx context.Context, cfg config, stdin io.Reader, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	s, err := NewServer(audit.NewSlogSink(logger.Handler()), func(ctx context.Context, ev middleware.DiagnosticEvent) {
		logger.ErrorContext(ctx, "tool call failed", "code", ev.Code, "err", errs.Describe(ev.Cause()), "call", ev.Details)
	})
	if err != nil {
		return err
	}
	if cfg.stdio {
		logger.Info("toolmw mcp-go demo on stdio")
		err := server.NewStdioServer(s).Listen(ctx, stdin, stdout)
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("stdio: %w", err)
		}
		return nil
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v (pass -addr with another host:port)", cfg.addr, err)
	}
	mux := http.NewServeMux()
	var shutdown func(context.Context) error
	name, path := "streamable HTTP", "/mcp"
	if cfg.sse {
		sse := server.NewSSEServer(s)
		mux.Handle("/sse", sse)
		mux.Handle("/message", sse)
		shutdown = sse.Shutdown
		name, path = "SSE", "/sse"
	} else {
		st := server.NewStreamableHTTPServer(s)
		mux.Handle("/mcp", st)
		shutdown = st.Shutdown
	}
	// No WriteTimeout: over SSE every answer is written on the long-lived
	// GET stream, which a write deadline would cut (see examples/server
	// for a server that lifts it per request).
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	url := "http://" + ln.Addr().String() + path
	sseFlag := ""
	if cfg.sse {
		sseFlag = " -sse"
	}
	fmt.Fprintf(stdout, "toolmw mcp-go demo: MCP over %s at %s\n", name, url)
	fmt.Fprintf(stdout, "try it:\n  go run ./examples/mcpgo%s -client %s\n", sseFlag, url)
	fmt.Fprintln(stdout, "stop it with Ctrl-C")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %v", cfg.addr, err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = shutdown(sctx) // closes the sessions and their streams
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	return nil
}

// runTour runs the server and mcp-go's in-process client in this process,
// printing what the client got and, between, the audit rows and
// diagnostics.
func runTour(ctx context.Context, out io.Writer) error {
	s, err := NewServer(
		audit.EmitterFunc(func(ctx context.Context, r audit.Record) {
			fmt.Fprintf(out, "   audit row: outcome=%s code=%s message=%q\n", r.Outcome, r.Code, r.Message)
		}),
		func(ctx context.Context, ev middleware.DiagnosticEvent) {
			fmt.Fprintf(out, "   diagnostics: %v\n", ev.Cause())
		})
	if err != nil {
		return err
	}
	c, err := client.NewInProcessClient(s)
	if err != nil {
		return err
	}
	return callAll(ctx, c, out)
}

// runClient calls every tool of the server at cfg.client with mcp-go's
// client, over SSE with -sse, else streamable HTTP.
func runClient(ctx context.Context, cfg config, out io.Writer) error {
	var c *client.Client
	var err error
	if cfg.sse {
		c, err = client.NewSSEMCPClient(cfg.client)
	} else {
		c, err = client.NewStreamableHttpClient(cfg.client)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "connected to %s with mcp-go's client\n", cfg.client)
	return callAll(ctx, c, out)
}

// callAll starts c, calls every tool and prints what the client got.
func callAll(ctx context.Context, c *client.Client, out io.Writer) error {
	defer func() { _ = c.Close() }()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Start(cctx); err != nil {
		return err
	}
	if _, err := c.Initialize(cctx, mcp.InitializeRequest{}); err != nil {
		return err
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"lookup_order", map[string]any{"id": 1}},
		{"lookup_order", map[string]any{"id": 42}},
		{"lookup_order", map[string]any{"id": "one"}},
		{"lookup_order", map[string]any{"id": 13}},
		{"sales_report", map[string]any{"region": "emea"}},
		{"slow", map[string]any{}},
		{"no_such_tool", map[string]any{}},
	}
	for _, cl := range calls {
		b, _ := json.Marshal(cl.args)
		fmt.Fprintf(out, "%s %s\n", cl.tool, b)
		req := mcp.CallToolRequest{}
		req.Params.Name = cl.tool
		req.Params.Arguments = cl.args
		res, err := c.CallTool(cctx, req)
		fmt.Fprintf(out, "   client got: %s\n", describe(res, err))
	}
	return nil
}

func describe(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "protocol error: " + err.Error()
	}
	var text string
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(mcp.TextContent); ok {
			text = t.Text
		}
	}
	if !res.IsError {
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			return "ok " + string(b)
		}
		return fmt.Sprintf("ok %q", text)
	}
	s := fmt.Sprintf("isError %q", text)
	if res.Meta != nil {
		if m, ok := res.Meta.AdditionalFields[toolctx.ErrorMetaKey]; ok {
			b, _ := json.Marshal(m)
			s += " " + string(b)
		}
	}
	return s
}
