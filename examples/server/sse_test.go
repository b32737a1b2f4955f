package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The demo over the 2024-11-05 HTTP+SSE transport, with go-sdk's own SSE
// client: the behaviour table's tour, nothing secret on the wire, every row
// with transport "sse" and the session's id, and SIGINT ends the event
// stream and exits 0.
func TestSSE(t *testing.T) {
	db := t.TempDir() + "/audit.db"
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-slow-timeout", testSlowTimeout.String())
	url := strings.TrimSuffix(serverURL(t, p), "/mcp") + "/sse"
	assert.Contains(t, p.stdout.String(), "over HTTP+SSE (the 2024-11-05 transport) at "+url, "the banner names the SSE endpoint")

	wire := &capture{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.SSEClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: captureRT{c: wire}}}, nil)
	require.NoError(t, err, "connect over SSE")
	var decoded bytes.Buffer
	want := tour(t, cs, &decoded)
	// Cancelled by the client: the SSE session delivers the cancellation.
	// go-sdk's client sends notifications/cancelled from a goroutine after
	// CallTool has returned, so wait for the row before SIGINT, which
	// closes the listener (and would refuse that POST).
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 30}})
	cancel()
	require.Error(t, err, "the client gave up")
	want = append(want, expectRow{"slow", "canceled", "canceled", ""})
	deadline := time.Now().Add(20 * time.Second)
	for !hasRow(readAudit(t, db), "slow", "canceled") {
		require.True(t, time.Now().Before(deadline), "the canceled row never came")
		time.Sleep(50 * time.Millisecond)
	}

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt), "SIGINT")
	require.Equal(t, 0, p.wait(t), "SIGINT exits 0 with an SSE stream open; stderr:\n%s", p.stderr)
	_ = cs.Close()
	assertNoSecrets(t, "wire", wire.String())
	assertNoSecrets(t, "decoded", decoded.String())

	checkRows(t, readAudit(t, db), want, "sse")
	cmd := exec.Command(auditBin, "-db", db, "-json", "-limit", "1000")
	out, err := cmd.Output()
	require.NoError(t, err, "examples/audit")
	var rows []struct {
		SessionID string `json:"session_id"`
	}
	require.NoError(t, json.Unmarshal(out, &rows), "%s", out)
	require.NotEmpty(t, rows, "rows")
	for _, r := range rows {
		assert.NotEmpty(t, r.SessionID, "every SSE row has the session's id")
		assert.Equal(t, rows[0].SessionID, r.SessionID, "one session")
	}
}

func hasRow(rows []auditRow, tool, outcome string) bool {
	for _, r := range rows {
		if r.Tool == tool && r.Outcome == outcome {
			return true
		}
	}
	return false
}

// -max-sessions counts SSE sessions: with one open, a second event stream
// is refused with 503, and a POST of the open session is never refused.
func TestSSESessionCap(t *testing.T) {
	db := t.TempDir() + "/audit.db"
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-max-sessions", "1")
	url := strings.TrimSuffix(serverURL(t, p), "/mcp") + "/sse"
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: url}, nil)
	require.NoError(t, err, "the first SSE session")
	defer func() { _ = cs.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err, "request")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "second GET")
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a second session is refused: %s", body)
	assert.Contains(t, string(body), "limit of 1 open sessions", "and told why")

	res, err := call(t, cs, "greet", map[string]any{"name": "Ada"})
	require.NoError(t, err, "the open session's call")
	assert.False(t, res.IsError, "is served: %s", text(res))
}
