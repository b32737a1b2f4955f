package mcpsdktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolmwtest"
)

// Config says what [Run] checks.
type Config struct {
	// NewServer returns the server under test with its own tools and
	// chain, toolmw installed or not. It is called once per in-memory or
	// HTTP transport; the kit adds its failing tools.
	NewServer func() *mcp.Server
	// WrapHTTP, if set, wraps the HTTP handler (the server's own HTTP
	// middleware stack).
	WrapHTTP func(http.Handler) http.Handler
	// Transports to run over: toolmwtest.InMemory (through pipes, so
	// every byte is seen), StreamableHTTP, StatelessHTTP, SSE (on an
	// httptest server on 127.0.0.1) or a toolmwtest.Command, whose binary
	// registers the failing tools with [AddFailingToolsFromEnv] (NewServer
	// is not used for it). Default: the first four.
	Transports []toolmwtest.Transport
	// The rest mean what toolmwtest.Plan's fields do; the failures are
	// [Failures](Seed, Count).
	Seed         int64
	Count        int
	Causes       *toolmwtest.Causes
	Secrets      []string
	SkipOwnTools bool
	CallTimeout  time.Duration
}

// Run runs the check and reports each problem with t.Error; it returns the
// result.
func Run(t testing.TB, cfg Config) *toolmwtest.Result {
	t.Helper()
	res, err := Check(context.Background(), cfg)
	return toolmwtest.Report(t, res, err)
}

// Check runs the check and returns what it found, without a testing.TB: for
// tests of the kit itself, or to assert on the report.
func Check(ctx context.Context, cfg Config) (*toolmwtest.Result, error) {
	if len(cfg.Transports) == 0 {
		cfg.Transports = []toolmwtest.Transport{toolmwtest.InMemory, toolmwtest.StreamableHTTP, toolmwtest.StatelessHTTP, toolmwtest.SSE}
	}
	plan := toolmwtest.Plan{Transports: cfg.Transports, Seed: cfg.Seed, Count: cfg.Count, Causes: cfg.Causes,
		Secrets: cfg.Secrets, SkipOwnTools: cfg.SkipOwnTools, CallTimeout: cfg.CallTimeout}
	return toolmwtest.Check(ctx, plan, Failures, func(ctx context.Context, tr toolmwtest.Transport, fs []toolmwtest.Failure) (toolmwtest.Conn, error) {
		return connect(ctx, cfg, fs, tr)
	})
}

// connect starts the server for tr and connects the SDK's client to it,
// recording every byte from the server.
func connect(ctx context.Context, cfg Config, fs []toolmwtest.Failure, tr toolmwtest.Transport) (toolmwtest.Conn, error) {
	rec := new(toolmwtest.Recorder)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolmwtest", Version: "0.2.0"}, nil)
	var (
		cs   *mcp.ClientSession
		stop func()
		err  error
	)
	name := tr.String()
	isHTTP := name == toolmwtest.StreamableHTTP.String() || name == toolmwtest.StatelessHTTP.String() || name == toolmwtest.SSE.String()
	sse := name == toolmwtest.SSE.String()
	if (isHTTP || name == toolmwtest.InMemory.String()) && cfg.NewServer == nil {
		return toolmwtest.Conn{}, errors.New("needs Config.NewServer")
	}
	switch {
	case isHTTP:
		server := cfg.NewServer()
		AddFailingTools(server, fs)
		getServer := func(*http.Request) *mcp.Server { return server }
		var h http.Handler = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: name == toolmwtest.StatelessHTTP.String()})
		if sse {
			h = mcp.NewSSEHandler(getServer, nil)
		}
		if cfg.WrapHTTP != nil {
			h = cfg.WrapHTTP(h)
		}
		srv := httptest.NewServer(h)
		hc := &http.Client{Transport: rec.HTTPTransport(http.DefaultTransport)}
		var ct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}
		if sse {
			ct = &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: hc}
		}
		stop = func() {
			srv.CloseClientConnections()
			srv.Close()
			for ss := range server.Sessions() {
				_ = ss.Close()
			}
		}
		if cs, err = client.Connect(ctx, ct, nil); err != nil {
			stop()
		}
	case name == toolmwtest.InMemory.String():
		server := cfg.NewServer()
		AddFailingTools(server, fs)
		c2sR, c2sW := io.Pipe()
		s2cR, s2cW := io.Pipe()
		ss, serr := server.Connect(ctx, &mcp.IOTransport{Reader: c2sR, Writer: s2cW}, nil)
		if serr != nil {
			return toolmwtest.Conn{}, fmt.Errorf("serve: %w", serr)
		}
		stop = func() { _ = ss.Close() }
		if cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: rec.Tee(s2cR), Writer: c2sW}, nil); err != nil {
			stop()
		}
	default:
		stdin, stdout, stopCmd, serr := toolmwtest.StartCommand(tr)
		if serr != nil {
			return toolmwtest.Conn{}, serr
		}
		stop = stopCmd
		if cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: rec.Tee(stdout), Writer: stdin}, nil); err != nil {
			stop()
		}
	}
	if err != nil {
		return toolmwtest.Conn{}, fmt.Errorf("connect: %w", err)
	}
	return toolmwtest.Conn{
		Transport: tr.String(),
		ListTools: func(ctx context.Context) ([]toolmwtest.Tool, error) {
			var out []toolmwtest.Tool
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					return nil, err
				}
				out = append(out, toolmwtest.Tool{Name: tool.Name, InputSchema: tool.InputSchema})
			}
			return out, nil
		},
		CallTool: func(ctx context.Context, name string, args map[string]any) (toolmwtest.Answer, error) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || res == nil {
				return toolmwtest.Answer{}, err
			}
			a := toolmwtest.Answer{IsError: res.IsError, Structured: res.StructuredContent != nil}
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					a.Text += t.Text
				}
			}
			return a, nil
		},
		Alive: func(ctx context.Context) error {
			_, err := cs.ListTools(ctx, nil)
			return err
		},
		Received: rec,
		Close:    func() { _ = cs.Close(); stop() },
	}, nil
}
