package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// adminTokenVar is the variable the access tests name in -admin-token-env.
const adminTokenVar = "DEMO_TEST_ADMIN_TOKEN"

// bearer adds the admin's token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectAs(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, tr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func listed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

var allTools = []string{"crash", "divide", "greet", "lookup_order", "sales_report", "slow"}

// TestAdminScopeHidesCrash: with -admin-token-env, an anonymous caller
// does not see the crash tool and calling it answers as an unknown tool
// (its row says unauthenticated: an anonymous caller has no identity at
// the call); the admin sees and calls it.
func TestAdminScopeHidesCrash(t *testing.T) {
	t.Setenv(adminTokenVar, "demo-admin-secret")
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-admin-token-env", adminTokenVar)
	url := serverURL(t, p)

	anon := connectAs(t, url, "")
	assert.Equal(t, []string{"divide", "greet", "lookup_order", "sales_report", "slow"}, listed(t, anon))
	_, err := anon.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "%v", err)
	assert.Equal(t, `unknown tool "crash"`, we.Message)

	admin := connectAs(t, url, "demo-admin-secret")
	assert.Equal(t, allTools, listed(t, admin))
	res, err := admin.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "the admin's call ran the tool, which panics")

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait(t), "stderr:\n%s", p.stderr)
	rows := readAudit(t, db)
	require.Len(t, rows, 2)
	codes := []string{rows[0].Code, rows[1].Code}
	slices.Sort(codes)
	assert.Equal(t, []string{"internal", "unauthenticated"}, codes)
}

// TestObserveShowsAndNotes: with -observe too, the scope refuses and hides
// nothing: the anonymous caller sees and calls crash, and the row notes
// would_reject=require_scopes.
func TestObserveShowsAndNotes(t *testing.T) {
	t.Setenv(adminTokenVar, "demo-admin-secret")
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-admin-token-env", adminTokenVar, "-observe")
	url := serverURL(t, p)

	anon := connectAs(t, url, "")
	assert.Equal(t, allTools, listed(t, anon))
	res, err := anon.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "the call ran the tool, which panics")

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait(t), "stderr:\n%s", p.stderr)
	rows := readAudit(t, db)
	require.Len(t, rows, 1)
	assert.Equal(t, "panic", rows[0].Outcome)
	assert.Contains(t, rows[0].Notes, auditNote{Key: "would_reject", Value: "require_scopes"})
}

// TestAdminTokenEnvEmpty: -admin-token-env naming an empty variable is a
// usage error.
func TestAdminTokenEnvEmpty(t *testing.T) {
	t.Setenv(adminTokenVar, "")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", filepath.Join(t.TempDir(), "a.db"), "-admin-token-env", adminTokenVar)
	assert.Equal(t, 2, p.wait(t))
	assert.Equal(t, "toolmw demo server: -admin-token-env names $"+adminTokenVar+", which is empty: export the admin's token in it\n", p.stderr.String())
}
