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

var testPolicy = middleware.ScopePolicy{Tools: map[string][]string{"crash": {"admin"}, "sales_report": {"sales"}}}

// testServer is the demo's server with access as its Access guard, and
// the rows it writes.
func testServer(t *testing.T, access toolctx.Middleware) (*mcp.Server, func() []audit.Record) {
	var mu sync.Mutex
	var rows []audit.Record
	emit := audit.EmitterFunc(func(_ context.Context, r audit.Record) { mu.Lock(); rows = append(rows, r); mu.Unlock() })
	s, err := NewServer(ServerConfig{Audit: emit, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SlowTimeout: time.Second,
		Transport: toolctx.TransportInMemory, Access: access})
	require.NoError(t, err)
	return s, func() []audit.Record { mu.Lock(); defer mu.Unlock(); return slices.Clone(rows) }
}

func dialAs(t *testing.T, s *mcp.Server, scopes ...string) *mcp.ClientSession {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(toolctx.WithIdentity(context.Background(), toolctx.Identity{Subject: "u", Scopes: scopes}), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

// TestObservedScopesHideNothing: with the scope guard under
// middleware.Observe, every caller sees every tool (ScopePolicy.Allows
// would hide crash), the call runs, and its row notes would_reject.
func TestObservedScopesHideNothing(t *testing.T) {
	s, rows := testServer(t, middleware.Observe(middleware.RequireScopes(testPolicy)))
	cs := dialAs(t, s, "sales")
	require.Equal(t, []string{"crash", "divide", "greet", "lookup_order", "sales_report", "slow"}, toolNames(t, cs))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_order", Arguments: map[string]any{"id": 1}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}})
	require.NoError(t, err, "observed: the call is not refused")
	require.True(t, res.IsError, "the crash tool ran, and panicked")
	got := rows()
	require.Len(t, got, 2)
	require.Equal(t, "ok", string(got[0].Outcome))
	require.Empty(t, wouldReject(got[0].Notes), "lookup_order needs no scope")
	require.Equal(t, "panic", string(got[1].Outcome), "the crash tool ran")
	require.Equal(t, []string{"require_scopes"}, wouldReject(got[1].Notes))
}

func wouldReject(notes []toolctx.Note) []string {
	var out []string
	for _, n := range notes {
		if n.Key == middleware.NoteWouldReject {
			out = append(out, n.Value)
		}
	}
	return out
}

// TestScopesHideTools: with ServerConfig.Access the demo lists to each
// caller only the tools it may call, answers a call to another as an
// unknown tool, and audits that call with RequireScopes' code.
func TestScopesHideTools(t *testing.T) {
	s, rows := testServer(t, middleware.RequireScopes(testPolicy))
	require.Equal(t, []string{"divide", "greet", "lookup_order", "sales_report", "slow"}, toolNames(t, dialAs(t, s, "sales")))
	require.Equal(t, []string{"crash", "divide", "greet", "lookup_order", "sales_report", "slow"}, toolNames(t, dialAs(t, s, "sales", "admin")))
	_, err := dialAs(t, s, "sales").CallTool(context.Background(), &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, `unknown tool "crash"`, we.Message)
	got := rows()
	require.NotEmpty(t, got)
	require.Equal(t, "crash", got[len(got)-1].Tool)
	require.Equal(t, "permission_denied", string(got[len(got)-1].Code))
}
