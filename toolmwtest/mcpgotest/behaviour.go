package mcpgotest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
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

// addRowTools registers the rows' tools, and the kit's alive tool (a
// liveness probe the rows use on mcp-go).
func addRowTools(s *server.MCPServer, secret string) {
	AddFailingTools(s, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	raw := func(name string, h server.ToolHandlerFunc) {
		s.AddTool(mcp.NewToolWithRawSchema(name, "toolmwtest: a row of the behaviour table", obj), h)
	}
	raw(toolmwtest.RowRaw, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("query orders: dial %s: connection refused", secret)
	})
	raw(toolmwtest.RowPanic, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("unreachable backend " + secret)
	})
	raw(toolmwtest.RowUnencodable, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}, StructuredContent: toolmwtest.Unencodable{Secret: secret}}, nil
	})
	raw(toolmwtest.RowPublic, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errs.NotFound(toolmwtest.RowPublicMessage).WithDetail(map[string]any{"id": 7}).WithCause(errors.New(secret))
	})
	raw(toolmwtest.RowOwnIsError, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(toolmwtest.RowOwnText), nil
	})
	type countIn struct {
		Count int `json:"count"`
	}
	s.AddTool(mcp.NewToolWithRawSchema(toolmwtest.RowInvalid, "toolmwtest: takes a count",
		json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)),
		mcpgo.TypedHandler(func(context.Context, mcp.CallToolRequest, countIn) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("counted"), nil
		}))
}
