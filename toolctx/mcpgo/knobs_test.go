package mcpgo_test

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// TestOptionMistakesFailTheConstructor: an option given a value it cannot
// use fails the constructor it is given to, named, at construction: an
// error from AddTool and AddTaskTool, a panic from Middleware,
// ServerOption, AddHooks and ToolFilter. A nil Option is skipped.
func TestOptionMistakesFailTheConstructor(t *testing.T) {
	const want = "WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()"
	bad := mcpgo.WithFallbackLogger(nil)
	s := server.NewMCPServer("t", "1.0.0", server.WithTaskCapabilities(true, true, true))
	h := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	task := func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		return &mcp.CreateTaskResult{}, nil
	}

	require.EqualError(t, mcpgo.AddTool(s, mcp.NewTool("a"), h, bad), "mcpgo.AddTool: "+want)
	require.EqualError(t, mcpgo.AddTaskTool(s, mcp.NewTool("b"), nil, task, bad), "mcpgo.AddTaskTool: "+want)
	assert.PanicsWithError(t, "mcpgo.Middleware: "+want, func() { mcpgo.Middleware(nil, bad) })
	assert.PanicsWithError(t, "mcpgo.ServerOption: "+want, func() { mcpgo.ServerOption(nil, bad) })
	assert.PanicsWithError(t, "mcpgo.AddHooks: "+want, func() { mcpgo.AddHooks(&server.Hooks{}, nil, bad) })
	assert.PanicsWithError(t, `mcpgo.ToolFilter: WithTransport(""): name a transport, or leave the option out for the adapter's detection`,
		func() { mcpgo.ToolFilter(mcpgo.WithTransport("")) })
	assert.PanicsWithError(t, "mcpgo.ServerOption: WithVisibility(nil): pass a predicate, or leave the option out for every tool visible",
		func() { mcpgo.ServerOption(nil, mcpgo.WithVisibility(nil)) })
	assert.NotPanics(t, func() { mcpgo.ServerOption(nil, nil, mcpgo.WithTransport(toolctx.TransportStdio)) }, "a nil Option is skipped")
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("c"), h, nil))
}
