package mcpgotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolmwtest"
)

// Config is toolmwtest.ServerConfig for mcp-go: its NewServer's server
// carries toolmw's ServerOption (or not). Of the transports, InMemory is
// mcp-go's in-process client, whose results are recorded as JSON (there
// are no bytes on that path); on StreamableHTTP, StatelessHTTP, SSE and
// Stdio every byte is recorded. The default is all but StatelessHTTP.
type Config = toolmwtest.ServerConfig[*server.MCPServer]

// BehaviourConfig says what [Kit]'s CheckBehaviour checks: the rows of
// toolmw's behaviour table on an mcp-go server, over the in-process
// transport, as toolmwtest.CheckRows describes; NewServer's server
// carries toolmw's ServerOption or its own middleware. The
// invalid-arguments row's tool uses mcpgo.TypedHandler (mcp-go validates
// no arguments unless the server has WithInputSchemaValidation).
type BehaviourConfig = toolmwtest.BehaviourConfig[*server.MCPServer]

// Kit is the twin of mcpsdktest.Kit for mcp-go: the failures add mcp-go's
// own shapes (a URL-elicitation wire error carrying data, an
// mcp.NewToolResultError text naming the cause, a structured content that
// cannot be encoded) to toolmwtest.Generate's, and odd failing tools are
// mcp.NewStructuredToolHandler handlers, the even ones (and mcp-go's own
// shapes, which return results) plain ones.
func Kit() toolmwtest.Kit[*server.MCPServer, *mcp.CallToolResult] {
	return toolmwtest.Kit[*server.MCPServer, *mcp.CallToolResult]{
		Name:                "mcpgotest",
		Transports:          []toolmwtest.Transport{toolmwtest.InMemory, toolmwtest.StreamableHTTP, toolmwtest.SSE, toolmwtest.Stdio},
		Shapes:              sdkShapes,
		AddTool:             addTool,
		Result:              result,
		AddTypedFailingTool: addTypedFailingTool,
		AddCountTool:        addCountTool,
		NewGuarded:          newGuarded,
		Dial:                dial,
		Answer:              answer,
	}
}

// StdioClient serves s with mcp-go's stdio server over a pair of pipes
// and returns mcp-go's client on their other ends, not yet started; every
// byte the server writes is copied to tee. stop ends the server and
// closes the pipes; call it after the client's Close.
func StdioClient(s *server.MCPServer, tee io.Writer) (c *client.Client, stop func()) {
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
	return client.NewClient(transport.NewIO(io.TeeReader(clientIn, tee), clientOut, io.NopCloser(strings.NewReader("")))), stop
}

// dial serves s over tr and connects mcp-go's client to it: HTTP on w's
// httptest server, stdio over pipes teed into w.Received, in memory with
// mcp-go's in-process client, whose results it records as JSON (there are
// no bytes on that path).
func dial(ctx context.Context, s *server.MCPServer, tr toolmwtest.Transport, w *toolmwtest.Wire) (toolmwtest.Client[*mcp.CallToolResult], error) {
	var (
		c   *client.Client
		err error
	)
	switch tr.String() {
	case toolmwtest.InMemory.String():
		c, err = client.NewInProcessClient(s)
	case toolmwtest.StreamableHTTP.String(), toolmwtest.StatelessHTTP.String():
		stateless := server.WithStateLess(tr.String() == toolmwtest.StatelessHTTP.String())
		url, hc := w.HTTP(server.NewStreamableHTTPServer(s, stateless))
		c, err = client.NewStreamableHttpClient(url+"/mcp", transport.WithHTTPBasicClient(hc))
	case toolmwtest.SSE.String():
		sse := server.NewSSEServer(s)
		w.OnClose(sse.CloseSessions) // the sessions first, then the HTTP server
		url, hc := w.HTTP(sse)
		c, err = client.NewSSEMCPClient(url+"/sse", transport.WithHTTPClient(hc))
	case toolmwtest.Stdio.String():
		var stop func()
		c, stop = StdioClient(s, w.Received)
		w.OnClose(stop)
	default:
		return toolmwtest.Client[*mcp.CallToolResult]{}, fmt.Errorf("mcpgotest serves no transport %s", tr)
	}
	if err == nil {
		err = start(ctx, c)
	}
	if err != nil {
		return toolmwtest.Client[*mcp.CallToolResult]{}, err
	}
	inMemory := tr.String() == toolmwtest.InMemory.String()
	return toolmwtest.Client[*mcp.CallToolResult]{
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
		CallTool: func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = name, args
			res, err := c.CallTool(ctx, req)
			if inMemory { // no bytes: record what the client library hands over
				if b, jerr := json.Marshal(res); jerr == nil && res != nil {
					_, _ = w.Received.Write(b)
				}
				if err != nil {
					_, _ = w.Received.Write([]byte(err.Error()))
				}
			}
			return res, err
		},
		Close: func() { _ = c.Close() },
	}, nil
}

// answer is the kit's Answer.
func answer(res *mcp.CallToolResult) toolmwtest.Answer {
	if res == nil {
		return toolmwtest.Answer{}
	}
	a := toolmwtest.Answer{IsError: res.IsError, Structured: res.StructuredContent != nil}
	for _, ct := range res.Content {
		if t, ok := ct.(mcp.TextContent); ok {
			a.Text += t.Text
		}
	}
	return a
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
