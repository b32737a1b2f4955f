package mcpsdk_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// TestInstallOrder checks the order Install's doc gives: each
// AddReceivingMiddleware wraps the handler as it is, so a receiving
// middleware added after Install runs outside toolmw, one added before it
// inside.
func TestInstallOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	sdkMW := func(name string) mcp.Middleware {
		return func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/call" {
					note(name)
				}
				return next(ctx, method, req)
			}
		}
	}
	toolmw := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			note("toolmw")
			return next.CallTool(ctx, req)
		})
	}

	s := mcp.NewServer(&mcp.Implementation{Name: "order"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		note("tool")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	s.AddReceivingMiddleware(sdkMW("added before Install"))
	mcpsdk.Install(s, toolmw)
	s.AddReceivingMiddleware(sdkMW("added after Install"))

	cs := connect(t, s)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	require.NoError(t, err, "the call succeeds")
	require.False(t, res.IsError, "the call succeeds")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"added after Install", "toolmw", "added before Install", "tool"}, order,
		"the middleware added last is the outermost")
}
