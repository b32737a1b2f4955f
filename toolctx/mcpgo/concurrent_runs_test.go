package mcpgo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// TestConcurrentRunsOfTheTerminal: an interceptor that runs the rest of
// the chain twice at once (a hedging retry) gets each run's own result,
// for a native tool and for one added with AddTool, and the client gets
// the result the chain returned. Each run of the terminal keeps its state
// apart (adapter.Invocations); when they shared the call's, -race caught
// the two runs writing it.
func TestConcurrentRunsOfTheTerminal(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	twice := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			var wg sync.WaitGroup
			var other *toolctx.CallResult
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := *req
				r.Arguments = toolctx.RawArguments([]byte(`{"run":"second"}`))
				other = next.CallTool(ctx, &r)
			}()
			res := next.CallTool(ctx, req)
			wg.Wait()
			mu.Lock()
			seen = append(seen, chainText(res), chainText(other))
			mu.Unlock()
			return res
		})
	}
	s := server.NewMCPServer("t", "1", mcpgo.ServerOption(twice))
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("added"), toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("added " + string(req.Arguments.JSON()))
	})))
	s.AddTool(mcp.NewTool("native"), func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("native " + string(r.Params.RawArguments)), nil
	})
	c, err := client.NewInProcessClient(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Start(context.Background()))
	ir := mcp.InitializeRequest{}
	ir.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	_, err = c.Initialize(context.Background(), ir)
	require.NoError(t, err)
	for _, name := range []string{"added", "native"} {
		for range 10 {
			req := mcp.CallToolRequest{}
			req.Params.Name = name
			req.Params.Arguments = map[string]any{"run": "first"}
			res, err := c.CallTool(context.Background(), req)
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Len(t, res.Content, 1)
			assert.Equal(t, name+` {"run":"first"}`, res.Content[0].(mcp.TextContent).Text)
			mu.Lock()
			assert.Equal(t, []string{name + ` {"run":"first"}`, name + ` {"run":"second"}`}, seen)
			seen = nil
			mu.Unlock()
		}
	}
}

func chainText(r *toolctx.CallResult) string {
	if r == nil || len(r.Content) != 1 {
		return ""
	}
	t, _ := r.Content[0].(*toolctx.Text)
	if t == nil {
		return ""
	}
	return t.Text
}
