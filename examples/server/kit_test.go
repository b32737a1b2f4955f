package main

import (
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/examples/server/stack"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpsdktest"
)

// TestKit points toolmwtest at the demo server, as a user points it at
// theirs: the binary over stdio, every tool called with valid, empty and
// wrongly typed arguments, every byte the client received scanned for the
// demo's secrets, Go stacks and source paths.
func TestKit(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	res := mcpsdktest.Kit().Run(t, mcpsdktest.Config{
		Plan: toolmwtest.Plan{Transports: []toolmwtest.Transport{toolmwtest.Command("demo server", func() *exec.Cmd {
			return exec.Command(serverBin, "-stdio", "-audit-db", db, "-slow-timeout", testSlowTimeout.String())
		})}, Secrets: secrets},
	})
	assert.GreaterOrEqual(t, res.Calls, 12, "each of the demo's six tools was called at least twice")
	t.Log(res)
}

// TestKitEveryTransport points toolmwtest at the demo's tools behind the
// demo's chain on every in-process go-sdk transport (in-memory, streamable
// HTTP stateful and stateless, SSE), next to the kit's hostile tools, and
// checks that each raw cause reached diagnostics or the audit row.
func TestKitEveryTransport(t *testing.T) {
	causes := new(toolmwtest.Causes)
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	res := mcpsdktest.Kit().Run(t, mcpsdktest.Config{
		NewServer: func() *mcp.Server {
			s := mcp.NewServer(&mcp.Implementation{Name: "toolmw-demo"}, nil)
			require.NoError(t, stack.AddTools(s))
			mcpsdk.Install(s, stack.Chain(causes.Emitter(nil), causes.Diagnostics(nil), testSlowTimeout, discard).Middleware(),
				mcpsdk.WithFallbackLogger(discard))
			return s
		},
		Plan: toolmwtest.Plan{Causes: causes, Secrets: secrets},
	})
	assert.Greater(t, res.Calls, 400, "the hostile tools and the demo's on four transports")
}
