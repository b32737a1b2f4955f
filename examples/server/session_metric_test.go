package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With -metrics-addr, a session that ends is one mcp.server.session.duration
// measurement, with the version it negotiated.
func TestSessionMetric(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-metrics-addr", "127.0.0.1:0")
	url := serverURL(t, p)
	m := metricsRE.FindStringSubmatch(p.stdout.String())
	require.NotNil(t, m, "the banner says where the metrics are: %q", p.stdout.String())

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	_, err = call(t, cs, "greet", map[string]any{"name": "Ada"})
	require.NoError(t, err)
	require.NoError(t, cs.Close())

	var line string
	require.Eventually(t, func() bool {
		resp, err := http.Get(m[1])
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "mcp_server_session_duration_seconds_count{") {
				line = l
				return true
			}
		}
		return false
	}, 15*time.Second, 20*time.Millisecond, "the session's measurement appears once it has ended")
	assert.Contains(t, line, `mcp_protocol_version="2025-11-25"`)
	assert.Contains(t, line, `network_transport="tcp"`)
	assert.NotContains(t, line, "error_type")
	assert.True(t, strings.HasSuffix(line, " 1"), "one session: %s", line)

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 0, p.wait(t), "a clean exit; stderr: %s", p.stderr)
}
