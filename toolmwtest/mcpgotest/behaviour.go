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

// addCountTool is the kit's AddCountTool: mcp-go validates no arguments
// unless the server has WithInputSchemaValidation, so the tool decodes
// them with mcpgo.TypedHandler.
func addCountTool(s *server.MCPServer, name string) {
	s.AddTool(mcp.NewToolWithRawSchema(name, "toolmwtest: takes a count",
		json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)),
		mcpgo.TypedHandler(func(context.Context, mcp.CallToolRequest, toolmwtest.CountArgs) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(toolmwtest.RowCountText), nil
		}))
}

// newGuarded is the kit's NewGuarded.
func newGuarded(m toolctx.Middleware, visible func(*toolctx.Request) bool) *server.MCPServer {
	return server.NewMCPServer("toolmwtest", "0", mcpgo.ServerOption(m, mcpgo.WithVisibility(visible)))
}
