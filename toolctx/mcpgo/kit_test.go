package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpgotest"
)

// kitServer is an mcp-go server with a toolmw handler registered through
// mcpgo.AddTool next to the kit's natively registered failing tools, behind
// the recommended chain recording into causes.
func kitServer(t *testing.T, causes *toolmwtest.Causes) func() *server.MCPServer {
	return func() *server.MCPServer {
		chain := middleware.New(
			audit.Interceptor(causes.Emitter(nil)),
			middleware.Diagnostics(causes.Diagnostics(nil)),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
		)
		s := server.NewMCPServer("kit", "1", mcpgo.ServerOption(chain.Middleware(), mcpgo.WithFallbackLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))))
		tool := mcp.NewToolWithRawSchema("report", "fails with a raw error", json.RawMessage(`{"type":"object","properties":{"region":{"type":"string"}}}`))
		require.NoError(t, mcpgo.AddTool(s, tool, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			return toolctx.ErrorResult(errors.New("dial postgres://report:kit-secret-0000@db.internal/sales: refused"))
		})))
		return s
	}
}

// TestKit runs toolmwtest against the adapter on every mcp-go transport,
// then the behaviour table.
func TestKit(t *testing.T) {
	causes := new(toolmwtest.Causes)
	res := mcpgotest.Kit().Run(t, mcpgotest.Config{NewServer: kitServer(t, causes), Plan: toolmwtest.Plan{Causes: causes, Secrets: []string{"kit-secret-0000"}}})
	assert.Greater(t, res.Calls, 400, "every failing tool and the toolmw tool were called on four transports")

	rows, err := mcpgotest.Kit().CheckBehaviour(context.Background(), mcpgotest.BehaviourConfig{NewServer: kitServer(t, causes), Causes: causes})
	require.NoError(t, err)
	assert.Empty(t, rows.Problems, "%s", rows)
}
