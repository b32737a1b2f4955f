package mcpgotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolmwtest"
)

// Config says what [Run] checks; its fields mean what
// toolmwtest/mcpsdktest's Config's do.
type Config struct {
	// NewServer returns the server under test with its own tools and
	// toolmw's ServerOption (or not). It is called once per transport;
	// the kit adds its failing tools.
	NewServer func() *server.MCPServer
	// WrapHTTP, if set, wraps the HTTP handlers.
	WrapHTTP func(http.Handler) http.Handler
	// Transports to run over: toolmwtest.InMemory (mcp-go's in-process
	// client, whose results are recorded as JSON: there are no bytes on
	// that path), StreamableHTTP, SSE or Stdio (every byte recorded).
	// Default: all four.
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

// Run runs the check and reports each problem with t.Error.
func Run(t testing.TB, cfg Config) *toolmwtest.Result {
	t.Helper()
	res, err := Check(context.Background(), cfg)
	return toolmwtest.Report(t, res, err)
}

// Check runs the check and returns what it found.
func Check(ctx context.Context, cfg Config) (*toolmwtest.Result, error) {
	if cfg.NewServer == nil {
		return nil, fmt.Errorf("mcpgotest: Config.NewServer is nil")
	}
	if len(cfg.Transports) == 0 {
		cfg.Transports = []toolmwtest.Transport{toolmwtest.InMemory, toolmwtest.StreamableHTTP, toolmwtest.SSE, toolmwtest.Stdio}
	}
	plan := toolmwtest.Plan{Transports: cfg.Transports, Seed: cfg.Seed, Count: cfg.Count, Causes: cfg.Causes,
		Secrets: cfg.Secrets, SkipOwnTools: cfg.SkipOwnTools, CallTimeout: cfg.CallTimeout}
	return toolmwtest.Check(ctx, plan, Failures, func(ctx context.Context, tr toolmwtest.Transport, fs []toolmwtest.Failure) (toolmwtest.Conn, error) {
		s := cfg.NewServer()
		AddFailingTools(s, fs)
		return connect(ctx, cfg, s, tr)
	})
}

// connect serves s over tr and connects mcp-go's client to it.
func connect(ctx context.Context, cfg Config, s *server.MCPServer, tr toolmwtest.Transport) (toolmwtest.Conn, error) {
	rec := new(toolmwtest.Recorder)
	hc := &http.Client{Transport: rec.HTTPTransport(http.DefaultTransport)}
	wrap := func(h http.Handler) http.Handler {
		if cfg.WrapHTTP != nil {
			return cfg.WrapHTTP(h)
		}
		return h
	}
	var (
		c    *client.Client
		stop = func() {}
		err  error
	)
	switch tr.String() {
	case toolmwtest.InMemory.String():
		c, err = client.NewInProcessClient(s)
	case toolmwtest.StreamableHTTP.String():
		srv := httptest.NewServer(wrap(server.NewStreamableHTTPServer(s)))
		stop = srv.Close
		c, err = client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithHTTPBasicClient(hc))
	case toolmwtest.SSE.String():
		sse := server.NewSSEServer(s)
		srv := httptest.NewServer(wrap(sse))
		stop = func() { sse.CloseSessions(); srv.Close() }
		c, err = client.NewSSEMCPClient(srv.URL+"/sse", transport.WithHTTPClient(hc))
	case toolmwtest.Stdio.String():
		clientIn, serverOut := io.Pipe()
		serverIn, clientOut := io.Pipe()
		ss := server.NewStdioServer(s)
		ss.SetErrorLogger(log.New(io.Discard, "", 0))
		lctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = ss.Listen(lctx, serverIn, serverOut) }()
		stop = func() {
			cancel()
			_ = serverIn.Close()
			_ = serverOut.Close()
			_ = clientIn.Close()
			<-done
		}
		c = client.NewClient(transport.NewIO(io.TeeReader(clientIn, rec), clientOut, io.NopCloser(strings.NewReader(""))))
	default:
		return toolmwtest.Conn{}, fmt.Errorf("mcpgotest serves no transport %s", tr)
	}
	if err == nil {
		err = start(ctx, c)
	}
	if err != nil {
		stop()
		return toolmwtest.Conn{}, err
	}
	return toolmwtest.Conn{
		Transport: "mcp-go " + tr.String(),
		ListTools: func(ctx context.Context) ([]toolmwtest.Tool, error) {
			lt, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				return nil, err
			}
			out := make([]toolmwtest.Tool, len(lt.Tools))
			for i, tool := range lt.Tools {
				var schema any = tool.InputSchema
				if len(tool.RawInputSchema) > 0 {
					schema = tool.RawInputSchema
				}
				out[i] = toolmwtest.Tool{Name: tool.Name, InputSchema: schema}
			}
			return out, nil
		},
		CallTool: func(ctx context.Context, name string, args map[string]any) (toolmwtest.Answer, error) {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = name, args
			res, err := c.CallTool(ctx, req)
			if tr.String() == toolmwtest.InMemory.String() { // no bytes: record what the client library hands over
				if b, jerr := json.Marshal(res); jerr == nil && res != nil {
					_, _ = rec.Write(b)
				}
				if err != nil {
					_, _ = rec.Write([]byte(err.Error()))
				}
			}
			if err != nil || res == nil {
				return toolmwtest.Answer{}, err
			}
			a := toolmwtest.Answer{IsError: res.IsError, Structured: res.StructuredContent != nil}
			for _, ct := range res.Content {
				if t, ok := ct.(mcp.TextContent); ok {
					a.Text += t.Text
				}
			}
			return a, nil
		},
		// mcp-go's Ping sends nothing on protocol 2026-07-28 connections.
		Alive: func(ctx context.Context) error {
			_, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			return err
		},
		Received: rec,
		Close:    func() { _ = c.Close(); stop() },
	}, nil
}

func start(ctx context.Context, c *client.Client) error {
	// The SSE transport keeps its event stream on Start's context: one that
	// outlives the run.
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "toolmwtest", Version: "0.2.0"}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ictx, req); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return nil
}
