package mcpgo_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// TestEveryBuiltResultCarriesResultType: every kind of result toolmw's
// chain builds or rewrites instead of the SDK's handler (a rate limit's
// and an argument limit's rejection, a result limit's, a recovered panic,
// a scrubbed raw error, a scrubbed secret) carries "resultType":"complete"
// to a 2026-07-28 client, with no raw text, in process and on stateless
// HTTP.
func TestEveryBuiltResultCarriesResultType(t *testing.T) {
	for _, tr := range []string{"in-process", "http-stateless"} {
		t.Run(tr, func(t *testing.T) {
			chain := middleware.New(
				middleware.Normalize(errs.Normalizer{}),
				middleware.Recover,
				middleware.When(middleware.Tools("limited"), middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour)})),
				middleware.When(middleware.Tools("small"), middleware.MaxArgBytes(16)),
				middleware.When(middleware.Tools("big"), middleware.MaxResultBytes(1024, middleware.ResultReject)),
				middleware.When(middleware.Tools("leaks"), middleware.ScrubSecrets(middleware.ScrubConfig{})),
			)
			s := server.NewMCPServer("rt", "0", mcpgo.ServerOption(chain.Middleware()))
			ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			}
			s.AddTool(mcp.NewTool("limited"), ok)
			s.AddTool(mcp.NewTool("small"), ok)
			s.AddTool(mcp.NewTool("big"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(strings.Repeat("x", 4096)), nil
			})
			s.AddTool(mcp.NewTool("panics"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				panic("CANARY-panic")
			})
			s.AddTool(mcp.NewTool("fails"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, errors.New("CANARY-raw dial tcp 10.0.0.1:5432")
			})
			s.AddTool(mcp.NewTool("leaks"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("use postgres://app:CANARY-secret@db/prod"), nil
			})
			w := visWire(t, tr, s, "alice")
			check := func(name string, args map[string]any, why string) {
				t.Helper()
				_, err := call(t, w, name, args)
				require.NoError(t, err, why)
				raw := lastAnswer(t, w.bodyBytes())
				require.Contains(t, raw, `"resultType":"complete"`, "%s: %s", why, raw)
				require.NotContains(t, raw, "CANARY", "%s: %s", why, raw)
			}
			check("limited", map[string]any{}, "the SDK's own result")
			check("limited", map[string]any{}, "a rate limit's rejection")
			check("small", map[string]any{"pad": strings.Repeat("a", 64)}, "an argument limit's rejection")
			check("big", map[string]any{}, "a result limit's rejection")
			check("panics", map[string]any{}, "a recovered panic")
			check("fails", map[string]any{}, "a scrubbed raw error")
			check("leaks", map[string]any{}, "a result with a secret scrubbed")
		})
	}
}
