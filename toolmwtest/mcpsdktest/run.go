package mcpsdktest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolmwtest"
)

// Config says what [Kit]'s Run and Check check. Transports:
// toolmwtest.InMemory (through pipes, so every byte is seen),
// StreamableHTTP, StatelessHTTP, SSE (on an httptest server on 127.0.0.1)
// or a toolmwtest.Command, whose binary registers the failing tools with
// Kit().AddFailingToolsFromEnv. Default: the first four.
type Config = toolmwtest.ServerConfig[*mcp.Server]

// BehaviourConfig says what [Kit]'s CheckBehaviour checks: the rows of
// toolmw's behaviour table (the README's "What the caller sees, what the
// server keeps") on a go-sdk server, over the in-memory transport, as
// toolmwtest.CheckRows describes.
type BehaviourConfig = toolmwtest.BehaviourConfig[*mcp.Server]

// Kit is go-sdk's connector and tools: its Run, Check and CheckBehaviour
// run the checks every SDK kit makes (toolmwtest.Kit) on go-sdk servers,
// with go-sdk's own client. Its failures are toolmwtest.Generate's and
// go-sdk's own shapes (a handler's own *jsonrpc.Error with a
// protocol-looking code, a result whose structured content cannot be
// encoded, ...); even tools are raw mcp.ToolHandlers, odd ones typed
// handlers registered with mcp.AddTool, so both of the SDK's ways of
// turning an error into a response are tried.
func Kit() toolmwtest.Kit[*mcp.Server, *mcp.CallToolResult] {
	return toolmwtest.Kit[*mcp.Server, *mcp.CallToolResult]{
		Name:       "mcpsdktest",
		Transports: []toolmwtest.Transport{toolmwtest.InMemory, toolmwtest.StreamableHTTP, toolmwtest.StatelessHTTP, toolmwtest.SSE},
		Shapes:     sdkShapes,
		AddTool:    addTool, AddFailingTool: addFailingTool, Result: result, AddCountTool: addCountTool,
		NewGuarded: newGuarded, Identify: identify, Connect: connect,
	}
}

// connect serves server over tr (a Command transport's binary instead)
// and connects the SDK's client to it, recording every byte from the
// server.
func connect(ctx context.Context, server *mcp.Server, wrap func(http.Handler) http.Handler, tr toolmwtest.Transport) (toolmwtest.Conn, error) {
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
	switch {
	case isHTTP:
		getServer := func(*http.Request) *mcp.Server { return server }
		var h http.Handler = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: name == toolmwtest.StatelessHTTP.String()})
		if sse {
			h = mcp.NewSSEHandler(getServer, nil)
		}
		srv := httptest.NewServer(wrap(h))
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
