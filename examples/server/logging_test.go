package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/examples/server/stack"
)

// connectHTTP connects a go-sdk client to the server at url.
func connectHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{}}, nil)
	require.NoError(t, err)
	return cs
}

// With -log-file, the log is text lines on stderr and the same records as
// JSON lines in the file: diagnostics (the raw cause), the audit writer's
// own lines, shutdown.
func TestLogFile(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "demo.log")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", filepath.Join(dir, "audit.db"), "-log-file", logFile)
	cs := connectHTTP(t, serverURL(t, p))
	res, err := call(t, cs, "sales_report", map[string]any{"region": "emea"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	require.NoError(t, cs.Close())
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait(t), "stderr:\n%s", p.stderr)

	assert.Contains(t, p.stderr.String(), `msg="tool call failed"`, "text lines on stderr")
	f, err := os.Open(logFile)
	require.NoError(t, err)
	defer f.Close()
	msgs := map[string]map[string]any{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "a JSON line: %s", sc.Text())
		msgs[rec["msg"].(string)] = rec
	}
	require.Contains(t, msgs, "tool call failed", "diagnostics in the file: %v", msgs)
	assert.Contains(t, msgs["tool call failed"]["err"], stack.FakeDSN, "with the raw cause")
	var writer bool
	for m := range msgs {
		writer = writer || strings.Contains(m, "writer closed")
	}
	assert.True(t, writer, "the audit writer's own lines too: %v", msgs)
}

// A log handler that fails (a log file on a full disk) never reaches a
// call: calls are answered, stderr keeps every line, and says once that a
// handler failed.
func TestFailingLogHandler(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	dir := t.TempDir()
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", filepath.Join(dir, "audit.db"), "-log-file", "/dev/full")
	cs := connectHTTP(t, serverURL(t, p))
	for range 3 {
		res, err := call(t, cs, "crash", map[string]any{"reason": "bug"})
		require.NoError(t, err, "the call is answered")
		assert.Equal(t, "internal", errorMeta(t, res)["code"])
	}
	res, err := call(t, cs, "greet", map[string]any{"name": "Ada"})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	require.NoError(t, cs.Close())
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait(t), "stderr:\n%s", p.stderr)
	stderr := p.stderr.String()
	assert.Equal(t, 3, strings.Count(stderr, `msg="tool call failed"`), "stderr has every diagnostic")
	assert.Equal(t, 1, strings.Count(stderr, "a log handler failed"), "the failure is said once:\n%s", stderr)
	assert.Contains(t, stderr, "no space left on device")
}
