package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
)

// logReceiver is an OTLP/HTTP logs receiver on 127.0.0.1: it decodes the
// protobuf requests and keeps each record's attributes (string values).
type logReceiver struct {
	mu   sync.Mutex
	rows []map[string]string
}

func (c *logReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req collogpb.ExportLogsServiceRequest
	if r.URL.Path != "/v1/logs" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "not an OTLP logs request", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				row := map[string]string{}
				for _, kv := range lr.Attributes {
					row[kv.Key] = kv.Value.GetStringValue()
				}
				c.rows = append(c.rows, row)
			}
		}
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// -otlp-logs-endpoint sends every audit row over OTLP too, the raw message
// where the caller's was scrubbed, as in the store.
func TestOTLPLogsFlag(t *testing.T) {
	rcv := &logReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()

	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-slow-timeout", testSlowTimeout.String(),
		"-otlp-logs-endpoint", srv.URL)
	url := serverURL(t, p)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	_, err = call(t, cs, "greet", map[string]any{"name": "Ada"})
	require.NoError(t, err)
	res, err := call(t, cs, "sales_report", map[string]any{"region": "emea"})
	require.NoError(t, err)
	assertNoSecrets(t, "the answer", text(res))
	require.NoError(t, cs.Close())
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 0, p.wait(t), "a clean exit; stderr: %s", p.stderr)

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	byTool := map[string]map[string]string{}
	for _, r := range rcv.rows {
		if r["toolmw.kind"] == "tool" {
			byTool[r["gen_ai.tool.name"]] = r
		}
	}
	require.Contains(t, byTool, "greet", "the rows arrived by Close at the latest: %v", rcv.rows)
	assert.Equal(t, "ok", byTool["greet"]["toolmw.outcome"])
	assert.Equal(t, "tools/call", byTool["greet"]["mcp.method.name"])
	require.Contains(t, byTool, "sales_report")
	assert.Equal(t, "tool_error", byTool["sales_report"]["error.type"])
	assert.Contains(t, byTool["sales_report"]["toolmw.message"], "connection refused", "the row keeps the raw cause")
	rows := readAudit(t, db)
	assert.GreaterOrEqual(t, len(rows), 2, "the store has the rows too")
}

func TestOTLPLogsFlagError(t *testing.T) {
	p := startServer(t, "-otlp-logs-endpoint", "127.0.0.1:4318")
	assert.Equal(t, 2, p.wait(t), "a usage error")
	assert.Contains(t, p.stderr.String(), "-otlp-logs-endpoint must be an http:// or https:// URL", "the message says what to change")
}
