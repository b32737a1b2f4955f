package stack

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestScopesHideTools: with ServerConfig.Scopes the demo lists to each
// caller only the tools it may call, answers a call to another as an
// unknown tool, and audits that call with RequireScopes' code.
func TestScopesHideTools(t *testing.T) {
	var mu sync.Mutex
	var rows []audit.Record
	emit := audit.EmitterFunc(func(_ context.Context, r audit.Record) { mu.Lock(); rows = append(rows, r); mu.Unlock() })
	s, err := NewServer(ServerConfig{Audit: emit, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SlowTimeout: time.Second,
		Transport: toolctx.TransportInMemory, Scopes: &middleware.ScopePolicy{Tools: map[string][]string{"crash": {"admin"}, "sales_report": {"sales"}}}})
	require.NoError(t, err)
	dial := func(scopes ...string) *mcp.ClientSession {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.Connect(toolctx.WithIdentity(context.Background(), toolctx.Identity{Subject: "u", Scopes: scopes}), st, nil)
		require.NoError(t, err)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), ct, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
		return cs
	}
	names := func(cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return out
	}
	require.Equal(t, []string{"divide", "greet", "lookup_order", "sales_report", "slow"}, names(dial("sales")))
	require.Equal(t, []string{"crash", "divide", "greet", "lookup_order", "sales_report", "slow"}, names(dial("sales", "admin")))
	_, err = dial("sales").CallTool(context.Background(), &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, `unknown tool "crash"`, we.Message)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, rows)
	require.Equal(t, "crash", rows[len(rows)-1].Tool)
	require.Equal(t, "permission_denied", string(rows[len(rows)-1].Code))
}
