package mcpgotest

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolmwtest"
)

// BehaviourConfig says what [CheckBehaviour] checks; NewServer's server
// carries toolmw's ServerOption or its own middleware.
type BehaviourConfig = toolmwtest.BehaviourConfig[*server.MCPServer]

// CheckBehaviour asserts the rows of toolmw's behaviour table on an mcp-go
// server, over the in-process transport, as [toolmwtest.CheckRows]
// describes. The invalid-arguments row's tool uses mcpgo.TypedHandler (mcp-go
// validates no arguments unless the server has WithInputSchemaValidation).
func CheckBehaviour(ctx context.Context, cfg BehaviourConfig) (*toolmwtest.Result, error) {
	return kit.CheckBehaviour(ctx, cfg)
}

// addTool is the kit's AddTool: a raw tool handler, described by its name.
func addTool(s *server.MCPServer, name string, run func() (toolmwtest.Reply, error)) {
	s.AddTool(mcp.NewToolWithRawSchema(name, "toolmwtest: "+name, json.RawMessage(`{"type":"object"}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, err := run()
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{mcp.NewTextContent(r.Text)}, StructuredContent: r.Structured}, nil
		})
}

// addCountTool is the kit's AddCountTool: mcp-go validates no arguments
// unless the server has WithInputSchemaValidation, so the tool decodes
// them with mcpgo.TypedHandler.
func addCountTool(s *server.MCPServer, name string) {
	type countIn struct {
		Count int `json:"count"`
	}
	s.AddTool(mcp.NewToolWithRawSchema(name, "toolmwtest: takes a count",
		json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)),
		mcpgo.TypedHandler(func(context.Context, mcp.CallToolRequest, countIn) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("counted"), nil
		}))
}

// newGuarded is the kit's NewGuarded.
func newGuarded(m toolctx.Middleware, visible func(*toolctx.Request) bool) *server.MCPServer {
	return server.NewMCPServer("toolmwtest", "0", mcpgo.ServerOption(m, mcpgo.WithVisibility(visible)))
}
