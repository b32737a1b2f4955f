package mcpgotest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolmwtest"
)

// BehaviourConfig says what [CheckBehaviour] checks.
type BehaviourConfig struct {
	// NewServer returns the server under test, with toolmw's ServerOption
	// or its own middleware; the check adds a tool for each row of the
	// table.
	NewServer func() *server.MCPServer
	// Causes, if set, is wired into the chain's diagnostics and audit log;
	// then the server side of each row is checked too.
	Causes *toolmwtest.Causes
	// CallTimeout bounds each call. Default 10s.
	CallTimeout time.Duration
}

// CheckBehaviour asserts the rows of toolmw's behaviour table on an mcp-go
// server, over the in-process transport, as [toolmwtest.CheckRows]
// describes. The invalid-arguments row's tool uses mcpgo.TypedHandler (mcp-go
// validates no arguments unless the server has WithInputSchemaValidation).
func CheckBehaviour(ctx context.Context, cfg BehaviourConfig) (*toolmwtest.Result, error) {
	if cfg.NewServer == nil {
		return nil, errors.New("mcpgotest: BehaviourConfig.NewServer is nil")
	}
	return toolmwtest.CheckTable(ctx, cfg.Causes, cfg.CallTimeout, func(secret string) (toolmwtest.Conn, error) {
		s := cfg.NewServer()
		addRowTools(s, secret)
		AddFailingTools(s, nil)
		return connect(ctx, Config{}, s, toolmwtest.InMemory)
	})
}

func addRowTools(s *server.MCPServer, secret string) {
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
