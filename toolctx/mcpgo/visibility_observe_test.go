package mcpgo_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// observeVisServer serves the tools behind scopes (RequireScopes(visPolicy),
// observed or not) with middleware.Visibility(scopes); notes gets each
// call's notes, as the audit row would.
func observeVisServer(ran *atomic.Int64, notes *noteLog, observed bool, tools ...string) *server.MCPServer {
	scopes := middleware.RequireScopes(visPolicy)
	if observed {
		scopes = middleware.Observe(scopes)
	}
	chain := middleware.New(middleware.After(notes.after), scopes)
	s := server.NewMCPServer("vis", "0", mcpgo.ServerOption(chain.Middleware(), mcpgo.WithVisibility(middleware.Visibility(scopes))))
	for _, name := range tools {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran.Add(1)
			return mcp.NewToolResultText("ran " + name), nil
		})
	}
	return s
}

// noteLog records the notes of every call's result.
type noteLog struct {
	mu    sync.Mutex
	notes [][]toolctx.Note
}

func (l *noteLog) after(_ context.Context, info middleware.CallInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, info.Result.Notes())
}

func (l *noteLog) last() []toolctx.Note {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.notes) == 0 {
		return nil
	}
	return l.notes[len(l.notes)-1]
}

// TestVisibilityFollowsObserve: with RequireScopes in observe mode and the
// adapter's visibility asked of the same guard (middleware.Visibility), a
// caller lists and calls every tool, as before the guard was rolled out,
// and the call the guard would have refused is noted
// would_reject=require_scopes; enforced, the same wiring hides the tool.
func TestVisibilityFollowsObserve(t *testing.T) {
	for _, tr := range []string{"in-process", "http-stateful", "http-stateless"} {
		t.Run(tr, func(t *testing.T) {
			var ran atomic.Int64
			var notes noteLog
			alice := visWire(t, tr, observeVisServer(&ran, &notes, true, "public", "read", "deploy"), "alice")
			assert.Equal(t, []string{"deploy", "public", "read"}, visNames(t, alice), "observe mode hides nothing")
			res, err := call(t, alice, "deploy", map[string]any{})
			require.NoError(t, err, "the tool is not answered as unknown")
			require.False(t, res.IsError)
			assert.Equal(t, int64(1), ran.Load(), "the tool ran")
			assert.Contains(t, notes.last(), toolctx.Note{Key: middleware.NoteWouldReject, Value: "require_scopes"})

			enforced := visWire(t, tr, observeVisServer(&ran, &notes, false, "public", "read", "deploy"), "alice")
			assert.Equal(t, []string{"public", "read"}, visNames(t, enforced), "enforced, the tool is hidden")
			_, err = call(t, enforced, "deploy", map[string]any{})
			require.Error(t, err, "and answered as an unknown tool")
			assert.Equal(t, int64(1), ran.Load(), "and does not run")
		})
	}
}
