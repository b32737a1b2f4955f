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

// Config says what [Run] checks. Transports: toolmwtest.InMemory (mcp-go's
// in-process client, whose results are recorded as JSON: there are no
// bytes on that path), StreamableHTTP, StatelessHTTP, SSE or Stdio (every
// byte recorded). Default: all but StatelessHTTP. NewServer's server carries toolmw's ServerOption (or
// not). The failures are [Failures](Seed, Count).
type Config = toolmwtest.ServerConfig[*server.MCPServer]

// kit is mcp-go's connector and tools, for the runs every SDK kit makes.
var kit = toolmwtest.Kit[*server.MCPServer]{Name: "mcpgotest", Failures: Failures, AddFailingTools: AddFailingTools, AddTool: addTool, AddCountTool: addCountTool, NewGuarded: newGuarded, Connect: connect,
	Transports: []toolmwtest.Transport{toolmwtest.InMemory, toolmwtest.StreamableHTTP, toolmwtest.SSE, toolmwtest.Stdio}}

// Run runs the check and reports each problem with t.Error.
func Run(t testing.TB, cfg Config) *toolmwtest.Result { t.Helper(); return kit.Run(t, cfg) }

// Check runs the check and returns what it found.
func Check(ctx context.Context, cfg Config) (*toolmwtest.Result, error) { return kit.Check(ctx, cfg) }

// connect serves s over tr and connects mcp-go's client to it.
func connect(ctx context.Context, s *server.MCPServer, wrap func(http.Handler) http.Handler, tr toolmwtest.Transport) (toolmwtest.Conn, error) {
	rec := new(toolmwtest.Recorder)
	hc := &http.Client{Transport: rec.HTTPTransport(http.DefaultTransport)}
	var (
		c    *client.Client
		stop = func() {}
		err  error
	)
	switch tr.String() {
	case toolmwtest.InMemory.String():
		c, err = client.NewInProcessClient(s)
	case toolmwtest.StreamableHTTP.String(), toolmwtest.StatelessHTTP.String():
		stateless := server.WithStateLess(tr.String() == toolmwtest.StatelessHTTP.String())
		srv := httptest.NewServer(wrap(server.NewStreamableHTTPServer(s, stateless)))
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
