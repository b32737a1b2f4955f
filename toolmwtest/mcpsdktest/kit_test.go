package mcpsdktest_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpsdktest"
)

func bareServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return s
}

// toolmwServer is bareServer behind toolmw's recommended chain, with the
// kit's recorder on the server side.
func toolmwServer(causes *toolmwtest.Causes) func() *mcp.Server {
	return func() *mcp.Server {
		s := bareServer()
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		chain := middleware.New(
			audit.Interceptor(causes.Emitter(nil)),
			middleware.Diagnostics(causes.Diagnostics(nil)),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
		)
		mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithFallbackLogger(quiet))
		return s
	}
}

// TestFindsTheLeaksOfABareServer: the go-sdk sends a raw handler error's
// text to the client; the kit must say so, precisely.
func TestFindsTheLeaksOfABareServer(t *testing.T) {
	res, err := mcpsdktest.Kit().Check(context.Background(), mcpsdktest.Config{
		NewServer: bareServer,
		Plan: toolmwtest.Plan{Transports: []toolmwtest.Transport{toolmwtest.InMemory},
			Count: 16, // the raw shapes; no panic (the bare SDK would crash)
		},
	})
	require.NoError(t, err)
	require.NotEmpty(t, res.Problems, "a bare go-sdk server leaks raw errors")
	report := res.String()
	t.Log(report)
	assert.Contains(t, report, "[in-memory] toolmwtest_fail_000 (raw errors.New): canary at byte", "the report names transport, tool, shape and rule")
	assert.Contains(t, report, "»"+toolmwtest.CanaryPrefix, "the report highlights the canary")
	var own int
	for _, p := range res.Problems {
		if p.Tool == "echo" {
			own++
		}
	}
	assert.Zero(t, own, "the server's own tool echoes only what it was given: no finding")
}

// TestNothingLeaksThroughToolmw runs the whole kit against toolmw on every
// go-sdk transport, with the server side checked too.
func TestNothingLeaksThroughToolmw(t *testing.T) {
	causes := new(toolmwtest.Causes)
	res := mcpsdktest.Kit().Run(t, mcpsdktest.Config{NewServer: toolmwServer(causes), Plan: toolmwtest.Plan{Causes: causes}})
	assert.Greater(t, res.Calls, 400, "every failing tool and the server's own were called on four transports")
}

func TestFailuresEnv(t *testing.T) {
	t.Setenv(toolmwtest.FailuresEnv, "nonsense")
	err := mcpsdktest.Kit().AddFailingToolsFromEnv(mcp.NewServer(&mcp.Implementation{Name: "x"}, nil))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), `want "seed,count"`), "the error says what to write: %v", err)
}

// TestBehaviourTableThroughToolmw: the recommended chain keeps every row.
func TestBehaviourTableThroughToolmw(t *testing.T) {
	causes := new(toolmwtest.Causes)
	res, err := mcpsdktest.Kit().CheckBehaviour(context.Background(), mcpsdktest.BehaviourConfig{NewServer: toolmwServer(causes), Causes: causes})
	require.NoError(t, err)
	assert.Empty(t, res.Problems, "%s", res)
	assert.Equal(t, 8, res.Calls, "one call per row, and one more after the panic")
}

// TestBehaviourTableFindsAMissingHook: a chain that never reports to
// diagnostics breaks the table's diagnostics column, and the check says so.
func TestBehaviourTableFindsAMissingHook(t *testing.T) {
	causes := new(toolmwtest.Causes)
	noDiagnostics := func() *mcp.Server {
		s := bareServer()
		chain := middleware.New(audit.Interceptor(causes.Emitter(nil)), middleware.Normalize(errs.Normalizer{}), middleware.Recover)
		mcpsdk.Install(s, chain.Middleware())
		return s
	}
	res, err := mcpsdktest.Kit().CheckBehaviour(context.Background(), mcpsdktest.BehaviourConfig{NewServer: noDiagnostics, Causes: causes})
	require.NoError(t, err)
	require.Len(t, res.Problems, 1, "%s", res)
	assert.Contains(t, res.Problems[0].Issue, "reached no diagnostics event", "the problem names the column broken")
}
