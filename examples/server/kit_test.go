package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/toolmwtest/mcpsdktest"
)

// TestKit points toolmwtest at the demo server, as a user points it at
// theirs: the binary over stdio, every tool called with valid, empty and
// wrongly typed arguments, every byte the client received scanned for the
// demo's secrets, Go stacks and source paths.
func TestKit(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	res := mcpsdktest.Run(t, mcpsdktest.Config{
		Transports: []mcpsdktest.Transport{mcpsdktest.Command("demo server", func() *exec.Cmd {
			return exec.Command(serverBin, "-stdio", "-audit-db", db, "-slow-timeout", testSlowTimeout.String())
		})},
		Secrets: secrets,
	})
	assert.GreaterOrEqual(t, res.Calls, 12, "each of the demo's six tools was called at least twice")
	t.Log(res)
}
