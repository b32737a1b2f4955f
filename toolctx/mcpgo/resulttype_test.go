package mcpgo_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// TestInterceptorResultsCarryResultType: a result an interceptor builds (a
// guard's rejection, a cache hit, a timeout) carries
// "resultType":"complete" to a client of protocol 2026-07-28 (mcp-go's
// client speaks it). mcp-go stamps every result it sends
// (server/response.go, decorateResult), the adapter's included: this
// holds the adapter to it.
func TestInterceptorResultsCarryResultType(t *testing.T) {
	for _, tr := range []string{"in-process", "http-stateless"} {
		t.Run(tr, func(t *testing.T) {
			var ran atomic.Int64
			chain := middleware.New(
				middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"guarded": {"admin"}}}),
				middleware.When(middleware.Tools("cached"), middleware.Cache(middleware.CacheConfig{TTL: time.Hour})),
				middleware.When(middleware.Tools("slow"), middleware.Timeout(50*time.Millisecond)),
			)
			s := server.NewMCPServer("rt", "0", mcpgo.ServerOption(chain.Middleware()))
			s.AddTool(mcp.NewTool("guarded"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ran.Add(1)
				return mcp.NewToolResultText("guarded"), nil
			})
			s.AddTool(mcp.NewTool("cached"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ran.Add(1)
				return mcp.NewToolResultText("fresh"), nil
			})
			s.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})
			w := visWire(t, tr, s, "alice") // alice lacks "admin"
			answer := func(name string) (*mcp.CallToolResult, string) {
				t.Helper()
				res, err := call(t, w, name, map[string]any{})
				require.NoError(t, err)
				return res, lastAnswer(t, w.bodyBytes())
			}
			res, raw := answer("guarded")
			require.True(t, res.IsError)
			require.Contains(t, raw, `"permission_denied"`)
			require.Contains(t, raw, `"resultType":"complete"`, "a guard's rejection")

			answer("cached")
			res, raw = answer("cached")
			require.Equal(t, "fresh", res.Content[0].(mcp.TextContent).Text)
			require.Equal(t, int64(1), ran.Load(), "the second call is a cache hit")
			require.Contains(t, raw, `"resultType":"complete"`, "a cache hit")

			res, raw = answer("slow")
			require.True(t, res.IsError)
			require.Contains(t, raw, `"timeout"`)
			require.Contains(t, raw, `"resultType":"complete"`, "a timeout")
		})
	}
}
