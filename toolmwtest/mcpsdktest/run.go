package mcpsdktest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolmwtest"
)

// Transport is one way for the kit's client to reach the server.
type Transport struct {
	name      string
	http      bool
	stateless bool
	sse       bool
	command   func() *exec.Cmd
}

// String returns the transport's name, as reports show it.
func (t Transport) String() string { return t.name }

// The transports [Run] can use. InMemory connects the SDK's client and
// server through pipes (what mcp.NewInMemoryTransports does), so every byte
// is seen; the HTTP ones serve on an httptest server on 127.0.0.1.
var (
	InMemory       = Transport{name: "in-memory"}
	StreamableHTTP = Transport{name: "streamable-http", http: true}
	StatelessHTTP  = Transport{name: "streamable-http-stateless", http: true, stateless: true}
	SSE            = Transport{name: "sse", http: true, sse: true}
)

// Command returns a transport to the stdio of a server binary: cmd is called
// once per run for a fresh *exec.Cmd. [Config.NewServer] is not used for it;
// the binary registers the failing tools itself with
// [AddFailingToolsFromEnv] ([Run] sets [toolmwtest.FailuresEnv] in its environment), or
// only its own tools are called.
func Command(name string, cmd func() *exec.Cmd) Transport {
	return Transport{name: "stdio: " + name, command: cmd}
}

// Config says what [Run] checks.
type Config struct {
	// NewServer returns the server under test with its own tools and
	// chain, toolmw installed or not. It is called once per in-memory or
	// HTTP transport; the kit adds its failing tools.
	NewServer func() *mcp.Server
	// WrapHTTP, if set, wraps the HTTP handler (the server's own HTTP
	// middleware stack).
	WrapHTTP func(http.Handler) http.Handler
	// Transports to run over. Default: InMemory, StreamableHTTP,
	// StatelessHTTP and SSE.
	Transports []Transport
	// Seed and Count choose the failures ([Failures]). Default seed 1,
	// count 100.
	Seed  int64
	Count int
	// Causes, if set, is checked after the run: every raw or panic
	// failure's canary must have reached a diagnostics event or an audit
	// row recorded there.
	Causes *toolmwtest.Causes
	// Secrets are more strings that must never reach the client: the
	// server's own credentials, say.
	Secrets []string
	// SkipOwnTools leaves the server's own tools uncalled.
	SkipOwnTools bool
	// CallTimeout bounds each call. Default 10s.
	CallTimeout time.Duration
}

// Run runs the check and reports each problem with t.Error; it returns the
// result.
func Run(t testing.TB, cfg Config) *toolmwtest.Result {
	t.Helper()
	res, err := Check(context.Background(), cfg)
	if err != nil {
		t.Fatalf("toolmwtest: %v", err)
	}
	for _, p := range res.Problems {
		t.Error(p.String())
	}
	return res
}

// Check runs the check and returns what it found, without a testing.TB: for
// tests of the kit itself, or to assert on the report.
func Check(ctx context.Context, cfg Config) (*toolmwtest.Result, error) {
	if len(cfg.Transports) == 0 {
		cfg.Transports = []Transport{InMemory, StreamableHTTP, StatelessHTTP, SSE}
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Count == 0 {
		cfg.Count = 100
	}
	fs := Failures(cfg.Seed, cfg.Count)
	opts := toolmwtest.Options{Failures: fs, Secrets: cfg.Secrets, SkipOwnTools: cfg.SkipOwnTools, CallTimeout: cfg.CallTimeout}
	res := new(toolmwtest.Result)
	for _, tr := range cfg.Transports {
		if tr.command == nil && cfg.NewServer == nil {
			return res, fmt.Errorf("transport %s needs Config.NewServer", tr)
		}
		conn, err := connect(ctx, cfg, fs, tr)
		if err != nil {
			return res, fmt.Errorf("%s: %w", tr, err)
		}
		if err := toolmwtest.Exercise(ctx, conn, opts, res); err != nil {
			return res, err
		}
	}
	if cfg.Causes != nil {
		toolmwtest.CheckCauses(fs, cfg.Causes, res)
	}
	return res, nil
}

// connect starts the server for tr and connects the SDK's client to it,
// recording every byte from the server.
func connect(ctx context.Context, cfg Config, fs []toolmwtest.Failure, tr Transport) (toolmwtest.Conn, error) {
	rec := new(toolmwtest.Recorder)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolmwtest", Version: "0.2.0"}, nil)
	var (
		cs   *mcp.ClientSession
		stop func()
		err  error
	)
	switch {
	case tr.command != nil:
		cs, stop, err = connectCommand(ctx, cfg, tr, client, rec)
	case tr.http:
		server := cfg.NewServer()
		AddFailingTools(server, fs)
		getServer := func(*http.Request) *mcp.Server { return server }
		var h http.Handler = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: tr.stateless})
		if tr.sse {
			h = mcp.NewSSEHandler(getServer, nil)
		}
		if cfg.WrapHTTP != nil {
			h = cfg.WrapHTTP(h)
		}
		srv := httptest.NewServer(h)
		hc := &http.Client{Transport: rec.HTTPTransport(http.DefaultTransport)}
		var ct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}
		if tr.sse {
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
	default:
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

func connectCommand(ctx context.Context, cfg Config, tr Transport, client *mcp.Client, rec *toolmwtest.Recorder) (*mcp.ClientSession, func(), error) {
	cmd := tr.command()
	cmd.Env = append(cmd.Environ(), fmt.Sprintf("%s=%d,%d", toolmwtest.FailuresEnv, cfg.Seed, cfg.Count))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start: %w", err)
	}
	stop := func() {
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
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: rec.Tee(stdout), Writer: stdin}, nil)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return cs, stop, nil
}
