package mcpsdktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolmwtest"
)

// BehaviourConfig says what [CheckBehaviour] checks.
type BehaviourConfig = toolmwtest.BehaviourConfig[*mcp.Server]

// CheckBehaviour asserts the rows of toolmw's behaviour table (the README's
// "What the caller sees, what the server keeps") on a server, over the
// in-memory transport, as [toolmwtest.CheckRows] describes. Each broken row
// is a problem of the result.
func CheckBehaviour(ctx context.Context, cfg BehaviourConfig) (*toolmwtest.Result, error) {
	return kit.CheckBehaviour(ctx, cfg)
}

func addRowTools(s *mcp.Server, secret string) {
	obj := json.RawMessage(`{"type":"object"}`)
	raw := func(name string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: "toolmwtest: a row of the behaviour table", InputSchema: obj}, h)
	}
	raw(toolmwtest.RowRaw, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("query orders: dial %s: connection refused", secret)
	})
	raw(toolmwtest.RowPanic, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("unreachable backend " + secret)
	})
	raw(toolmwtest.RowUnencodable, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: toolmwtest.Unencodable{Secret: secret}}, nil
	})
	raw(toolmwtest.RowPublic, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errs.NotFound(toolmwtest.RowPublicMessage).WithDetail(map[string]any{"id": 7}).WithCause(errors.New(secret))
	})
	raw(toolmwtest.RowOwnIsError, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: toolmwtest.RowOwnText}}}, nil
	})
	type countIn struct {
		Count int `json:"count"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: toolmwtest.RowInvalid, Description: "toolmwtest: takes a count"},
		func(context.Context, *mcp.CallToolRequest, countIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
		})
}
