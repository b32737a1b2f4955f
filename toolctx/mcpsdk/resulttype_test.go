package mcpsdk_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// TestInterceptorResultsCarryResultType: a result an interceptor builds
// without the SDK's handler (a guard's rejection, a cache hit, a timeout)
// carries "resultType":"complete" to a client of protocol 2026-07-28 (the
// SDK's client speaks it), as the SDK's own results do; go-sdk sets it only
// inside Server.callTool (go-sdk issue #1225).
func TestInterceptorResultsCarryResultType(t *testing.T) {
	for _, tr := range []string{"in-memory", "http-stateless"} {
		t.Run(tr, func(t *testing.T) {
			var ran atomic.Int64
			s := mcp.NewServer(&mcp.Implementation{Name: "rt", Version: "0"}, nil)
			add := func(name string, h mcp.ToolHandler) {
				s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, h)
			}
			add("guarded", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ran.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "guarded"}}}, nil
			})
			add("cached", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ran.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fresh"}}}, nil
			})
			add("slow", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})
			chain := middleware.New(
				middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"guarded": {"admin"}}}),
				middleware.When(middleware.Tools("cached"), middleware.Cache(middleware.CacheConfig{TTL: time.Hour})),
				middleware.When(middleware.Tools("slow"), middleware.Timeout(50*time.Millisecond)),
			)
			mcpsdk.Install(s, chain.Middleware())
			cs, wire := visDial(t, tr, s, "alice") // alice lacks "admin"

			answer := func(name string) (*mcp.CallToolResult, string) {
				t.Helper()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
				require.NoError(t, err)
				return res, string(lastAnswer(t, wire.bytes()))
			}
			res, raw := answer("guarded")
			require.True(t, res.IsError)
			require.Equal(t, string(errs.CodePermissionDenied), res.Meta[toolctx.ErrorMetaKey].(map[string]any)["code"])
			require.Contains(t, raw, `"resultType":"complete"`, "a guard's rejection")

			_, raw = answer("cached")
			require.Contains(t, raw, `"resultType":"complete"`, "the SDK's own result")
			res, raw = answer("cached")
			require.Equal(t, "fresh", res.Content[0].(*mcp.TextContent).Text)
			require.Equal(t, int64(1), ran.Load(), "the second call is a cache hit")
			require.Contains(t, raw, `"resultType":"complete"`, "a cache hit")

			res, raw = answer("slow")
			require.True(t, res.IsError)
			require.Equal(t, string(errs.CodeTimeout), res.Meta[toolctx.ErrorMetaKey].(map[string]any)["code"])
			require.Contains(t, raw, `"resultType":"complete"`, "a timeout")
		})
	}
}
