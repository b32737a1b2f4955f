package main

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577), still served: the test sets the level through the proxy.

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

// everythingEnv names the command that starts the npm package
// @modelcontextprotocol/server-everything over stdio (on Node 22). .ci/run
// installs it and always sets it.
const everythingEnv = "TOOLMW_TEST_EVERYTHING_SERVER"

// TestEverythingServer puts the proxy in front of the MCP project's own
// reference server, which nobody here wrote: its tools, resources and
// prompts are served as they are through the proxy, each call has its
// audit row, and the upstream's environment holds none of the proxy's
// secrets.
func TestEverythingServer(t *testing.T) {
	cmd := os.Getenv(everythingEnv)
	if cmd == "" {
		t.Skipf("%s is not set (.ci/run installs @modelcontextprotocol/server-everything and sets it)", everythingEnv)
	}
	t.Setenv(envSecretVar, envSecret)
	p := startProxy(t, "--", cmd, "stdio")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	init := p.cs.InitializeResult()
	require.NotNil(t, init.Capabilities.Tools)
	require.NotNil(t, init.Capabilities.Resources, "the upstream's capabilities are the proxy's")
	require.NotNil(t, init.Capabilities.Prompts)

	var names []string
	for tool, err := range p.cs.Tools(ctx, nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	require.Contains(t, names, "echo", "the upstream's tools: %v", names)

	res := p.call(t, "echo", map[string]any{"message": "through the proxy"})
	assert.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), "through the proxy")
	rows := p.rows(t, "echo", 1)
	assert.Equal(t, audit.OutcomeOK, rows[0].Outcome)

	if slices.Contains(names, "get-env") {
		res := p.call(t, "get-env", map[string]any{})
		assert.False(t, res.IsError, text(res))
		assert.Contains(t, text(res), "PATH")
		assertClean(t, res)
	}

	resources, err := p.cs.ListResources(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, resources.Resources)
	read, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resources.Resources[0].URI})
	require.NoError(t, err)
	assert.NotEmpty(t, read.Contents)
	_, err = p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/static/document/no-such-file.md"})
	assert.Error(t, err, "an unknown resource is the upstream's protocol error")

	prompts, err := p.cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, prompts.Prompts)
	for _, pr := range prompts.Prompts {
		if len(pr.Arguments) > 0 {
			continue
		}
		got, err := p.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: pr.Name})
		require.NoError(t, err, pr.Name)
		assert.NotEmpty(t, got.Messages, pr.Name)
		break
	}
	require.NoError(t, p.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
}
