package mcpsdk_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpsdktest"
)

// kitServer is a go-sdk server with toolmw handlers registered through
// mcpsdk.AddTypedTool next to the kit's natively registered failing tools,
// behind the recommended chain recording into causes.
func kitServer(t *testing.T, causes *toolmwtest.Causes) func() *mcp.Server {
	return func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "kit"}, nil)
		type in struct {
			Name  string `json:"name"`
			Times int    `json:"times,omitempty"`
		}
		type out struct {
			Greeting string `json:"greeting"`
		}
		require.NoError(t, mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "greet"}, func(_ context.Context, _ *toolctx.Request, v in) (out, error) {
			if v.Name == "" {
				return out{}, errs.InvalidArguments("name must not be empty")
			}
			return out{Greeting: "Hello, " + v.Name}, nil
		}))
		require.NoError(t, mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "report"}, func(context.Context, *toolctx.Request, struct{}) (out, error) {
			return out{}, errors.New("dial postgres://report:kit-secret-0000@db.internal/sales: refused")
		}))
		chain := middleware.New(
			audit.Interceptor(causes.Emitter(nil)),
			middleware.Diagnostics(causes.Diagnostics(nil)),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
		)
		mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithFallbackLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		return s
	}
}

// TestKit runs toolmwtest against the adapter on every go-sdk transport:
// the kit's hostile failures, natively registered, and toolmw handlers
// called with valid, empty and wrongly typed arguments; then the behaviour
// table.
func TestKit(t *testing.T) {
	causes := new(toolmwtest.Causes)
	res := mcpsdktest.Kit().Run(t, mcpsdktest.Config{NewServer: kitServer(t, causes), Plan: toolmwtest.Plan{Causes: causes, Secrets: []string{"kit-secret-0000"}}})
	assert.Greater(t, res.Calls, 400, "every failing tool and the toolmw tools were called on four transports")

	rows, err := mcpsdktest.Kit().CheckBehaviour(context.Background(), mcpsdktest.BehaviourConfig{NewServer: kitServer(t, causes), Causes: causes})
	require.NoError(t, err)
	assert.Empty(t, rows.Problems, "%s", rows)
}
