package mcpsdk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// TestEveryBuiltResultCarriesResultType: every kind of result toolmw's
// chain builds or rewrites instead of the SDK's handler (a rate limit's
// and an argument limit's rejection, a result limit's, a recovered panic,
// a scrubbed raw error, a scrubbed secret) carries "resultType":"complete"
// to a 2026-07-28 client, on the go-sdk transports that speak it (in
// memory and stateless streamable HTTP; a stateful HTTP session
// negotiates 2025-11-25, which has no resultType).
func TestEveryBuiltResultCarriesResultType(t *testing.T) {
	for _, tr := range []string{"in-memory", "http-stateless"} {
		t.Run(tr, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "rt", Version: "0"}, nil)
			add := func(name string, h mcp.ToolHandler) {
				s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, h)
			}
			text := func(s string) *mcp.CallToolResult {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
			}
			add("limited", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
			add("small", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
			add("big", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text(strings.Repeat("x", 4096)), nil
			})
			add("panics", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("CANARY-panic") })
			add("fails", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, errors.New("CANARY-raw dial tcp 10.0.0.1:5432")
			})
			add("leaks", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("use postgres://app:CANARY-secret@db/prod"), nil
			})
			chain := middleware.New(
				middleware.Normalize(errs.Normalizer{}),
				middleware.Recover,
				middleware.When(middleware.Tools("limited"), middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour)})),
				middleware.When(middleware.Tools("small"), middleware.MaxArgBytes(16)),
				middleware.When(middleware.Tools("big"), middleware.MaxResultBytes(1024, middleware.ResultReject)),
				middleware.When(middleware.Tools("leaks"), middleware.ScrubSecrets(middleware.ScrubConfig{})),
			)
			mcpsdk.Install(s, chain.Middleware())
			cs, wire := visDial(t, tr, s, "alice")
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("the session negotiated %s: resultType is 2026-07-28's", v)
			}

			call := func(name string, args map[string]any, why string) {
				t.Helper()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
				require.NoError(t, err, why)
				raw := string(lastAnswer(t, wire.bytes()))
				require.Contains(t, raw, `"resultType":"complete"`, "%s: %s", why, raw)
				require.NotContains(t, raw, "CANARY", "%s: %s", why, raw)
				require.NotNil(t, res, why)
			}
			call("limited", map[string]any{}, "the SDK's own result")
			call("limited", map[string]any{}, "a rate limit's rejection")
			call("small", map[string]any{"pad": strings.Repeat("a", 64)}, "an argument limit's rejection")
			call("big", map[string]any{}, "a result limit's rejection")
			call("panics", map[string]any{}, "a recovered panic")
			call("fails", map[string]any{}, "a scrubbed raw error")
			call("leaks", map[string]any{}, "a result with a secret scrubbed")
		})
	}
}
