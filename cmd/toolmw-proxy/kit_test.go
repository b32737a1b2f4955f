package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpsdktest"
)

// TestKitThroughProxy points toolmwtest's stdio run at the proxy (this
// test binary in roleProxy) in front of the leaky upstream: every tool
// called with valid, empty and wrongly typed arguments, every byte the
// client received scanned for the upstream's canary, the secret in the
// proxy's environment, Go stacks and source paths. Called directly, the
// upstream leaks all of them (TestLeakyUpstreamLeaks); through the proxy,
// nothing. The crash and garbage tools kill or break the upstream on
// every call, so the run also proves the proxy keeps answering through
// its restarts.
func TestKitThroughProxy(t *testing.T) {
	dir := t.TempDir()
	cfg := leakyConfig(t, "tools:\n  hang:\n    timeout: 1s\n  wait_cancel:\n    timeout: 1s\n")
	res := mcpsdktest.Kit().Run(t, mcpsdktest.Config{
		Plan: toolmwtest.Plan{Transports: []toolmwtest.Transport{toolmwtest.Command("toolmw-proxy", func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-stdio", "-audit-db", filepath.Join(dir, "audit.db"), "-config", cfg, "--", os.Args[0])
			cmd.Env = append(os.Environ(), roleEnv+"="+roleProxy, envSecretVar+"="+envSecret)
			return cmd
		})}, Secrets: []string{canary, envSecret}},
	})
	assert.GreaterOrEqual(t, res.Calls, 2*14, "each of the leaky upstream's fourteen tools, with valid and with empty arguments (their schemas have no properties to mistype)")
	t.Log(res)
}
