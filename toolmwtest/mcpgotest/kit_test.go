package mcpgotest_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpgotest"
)

func newServer(opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("kit", "1", opts...)
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	return s
}

// TestFindsTheLeaksOfABareServer: mcp-go sends a raw handler error's text
// to the client as a JSON-RPC error; the kit must say so.
func TestFindsTheLeaksOfABareServer(t *testing.T) {
	res, err := mcpgotest.Kit().Check(context.Background(), mcpgotest.Config{
		NewServer: func() *server.MCPServer { return newServer() },
		Plan: toolmwtest.Plan{Transports: []toolmwtest.Transport{toolmwtest.StreamableHTTP},
			Count: 14, // raw shapes only: a bare mcp-go server does not recover panics
		},
	})
	require.NoError(t, err)
	report := res.String()
	t.Log(report)
	assert.Contains(t, report, "[mcp-go streamable-http] toolmwtest_fail_000 (raw errors.New): canary at byte", "the report names transport, tool, shape and rule")
	assert.Contains(t, report, "»"+toolmwtest.CanaryPrefix, "the report highlights the canary")
}

// TestNothingLeaksThroughToolmw runs the kit against toolmw on every mcp-go
// transport, with the server side checked too.
func TestNothingLeaksThroughToolmw(t *testing.T) {
	causes := new(toolmwtest.Causes)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	chain := middleware.New(
		audit.Interceptor(causes.Emitter(nil)),
		middleware.Diagnostics(causes.Diagnostics(nil)),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	res := mcpgotest.Kit().Run(t, mcpgotest.Config{
		NewServer: func() *server.MCPServer {
			return newServer(mcpgo.ServerOption(chain.Middleware(), mcpgo.WithFallbackLogger(quiet)))
		},
		Plan: toolmwtest.Plan{Causes: causes},
	})
	assert.Greater(t, res.Calls, 400, "every failing tool and the server's own were called on four transports")
}

// TestBehaviourTableThroughToolmw: the recommended chain keeps every row on
// mcp-go too.
func TestBehaviourTableThroughToolmw(t *testing.T) {
	causes := new(toolmwtest.Causes)
	chain := middleware.New(
		audit.Interceptor(causes.Emitter(nil)),
		middleware.Diagnostics(causes.Diagnostics(nil)),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	res, err := mcpgotest.Kit().CheckBehaviour(context.Background(), mcpgotest.BehaviourConfig{
		NewServer: func() *server.MCPServer { return newServer(mcpgo.ServerOption(chain.Middleware())) },
		Causes:    causes,
	})
	require.NoError(t, err)
	assert.Empty(t, res.Problems, "%s", res)
	assert.Equal(t, 8, res.Calls, "one call per row, and one more after the panic")
}
