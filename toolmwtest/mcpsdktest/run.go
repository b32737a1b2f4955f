package mcpsdktest

import (
	"context"
	"fmt"
	"io"
	"net/http"

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
// handlers registered with [mcp.AddTool], so both of the SDK's ways of
// turning an error into a response are tried.
func Kit() toolmwtest.Kit[*mcp.Server, *mcp.CallToolResult] {
	return toolmwtest.Kit[*mcp.Server, *mcp.CallToolResult]{
		Name:                "mcpsdktest",
		Transports:          []toolmwtest.Transport{toolmwtest.InMemory, toolmwtest.StreamableHTTP, toolmwtest.StatelessHTTP, toolmwtest.SSE},
		Shapes:              sdkShapes,
		AddTool:             addTool,
		Result:              result,
		AddTypedFailingTool: addTypedFailingTool,
		AddCountTool:        addCountTool,
		NewGuarded:          newGuarded,
		Identify:            identify,
		Dial:                dial,
		Answer:              answer,
	}
}

// dial serves server over tr (a Command transport's binary instead) and
// connects the SDK's client to it: HTTP on w's httptest server, in memory
// through pipes whose server side is teed into w.Received.
func dial(ctx context.Context, server *mcp.Server, tr toolmwtest.Transport, w *toolmwtest.Wire) (toolmwtest.Client[*mcp.CallToolResult], error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "toolmwtest", Version: "0.2.0"}, nil)
	name := tr.String()
	getServer := func(*http.Request) *mcp.Server { return server }
	var ct mcp.Transport
	switch name {
	case toolmwtest.StreamableHTTP.String(), toolmwtest.StatelessHTTP.String():
		url, hc := w.HTTP(mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: name == toolmwtest.StatelessHTTP.String()}))
		ct = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}
		w.OnClose(closeSessions(server))
	case toolmwtest.SSE.String():
		url, hc := w.HTTP(mcp.NewSSEHandler(getServer, nil))
		ct = &mcp.SSEClientTransport{Endpoint: url, HTTPClient: hc}
		w.OnClose(closeSessions(server))
	case toolmwtest.InMemory.String():
		c2sR, c2sW := io.Pipe()
		s2cR, s2cW := io.Pipe()
		ss, err := server.Connect(ctx, &mcp.IOTransport{Reader: c2sR, Writer: s2cW}, nil)
		if err != nil {
			return toolmwtest.Client[*mcp.CallToolResult]{}, fmt.Errorf("serve: %w", err)
		}
		w.OnClose(func() { _ = ss.Close() })
		ct = &mcp.IOTransport{Reader: w.Received.Tee(s2cR), Writer: c2sW}
	default:
		stdin, stdout, stop, err := toolmwtest.StartCommand(tr)
		if err != nil {
			return toolmwtest.Client[*mcp.CallToolResult]{}, err
		}
		w.OnClose(stop)
		ct = &mcp.IOTransport{Reader: w.Received.Tee(stdout), Writer: stdin}
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		return toolmwtest.Client[*mcp.CallToolResult]{}, fmt.Errorf("connect: %w", err)
	}
	return toolmwtest.Client[*mcp.CallToolResult]{
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
		CallTool: func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		},
		Close: func() { _ = cs.Close() },
	}, nil
}

// closeSessions closes what is left of server's sessions, once its HTTP
// server is closed.
func closeSessions(server *mcp.Server) func() {
	return func() {
		for ss := range server.Sessions() {
			_ = ss.Close()
		}
	}
}

// answer is the kit's Answer.
func answer(res *mcp.CallToolResult) toolmwtest.Answer {
	if res == nil {
		return toolmwtest.Answer{}
	}
	a := toolmwtest.Answer{IsError: res.IsError, Structured: res.StructuredContent != nil}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			a.Text += t.Text
		}
	}
	return a
}
