package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collector is a fake OTLP/HTTP trace receiver on 127.0.0.1.
type collector struct {
	mu     sync.Mutex
	bodies [][]byte
	ctype  []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	if r.URL.Path == "/v1/traces" {
		c.bodies = append(c.bodies, b)
		c.ctype = append(c.ctype, r.Header.Get("Content-Type"))
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK) // an empty ExportTraceServiceResponse
}

func (c *collector) received() ([]byte, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Join(c.bodies, nil), append([]string(nil), c.ctype...)
}

var metricsRE = regexp.MustCompile(`metrics: Prometheus text at (http://\S+/metrics)`)

// -metrics-addr serves the histogram as Prometheus text, -otlp-endpoint
// sends the spans over OTLP/HTTP; neither carries a secret.
func TestTelemetryFlags(t *testing.T) {
	col := &collector{}
	otlp := httptest.NewServer(col)
	defer otlp.Close()

	db := filepath.Join(t.TempDir(), "audit.db")
	p := startServer(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-slow-timeout", testSlowTimeout.String(),
		"-metrics-addr", "127.0.0.1:0", "-otlp-endpoint", otlp.URL)
	url := serverURL(t, p)
	m := metricsRE.FindStringSubmatch(p.stdout.String())
	require.NotNil(t, m, "the banner says where the metrics are: %q", p.stdout.String())
	assert.Contains(t, p.stdout.String(), "traces: OTLP/HTTP to "+otlp.URL+"/v1/traces", "the banner says where the spans go")

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"greet", map[string]any{"name": "Ada"}}, {"sales_report", map[string]any{"region": "emea"}}, {"crash", map[string]any{"reason": "bug"}}} {
		_, err := call(t, cs, c.tool, c.args)
		require.NoError(t, err, c.tool)
	}

	resp, err := http.Get(m[1])
	require.NoError(t, err, "GET /metrics")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET /metrics")
	text := string(body)
	assert.Contains(t, text, "# TYPE mcp_server_operation_duration_seconds histogram", "the histogram, in seconds")
	for _, want := range []string{
		`gen_ai_tool_name="greet"`, `le="0.01"`, `le="300"`, `mcp_method_name="tools/call"`, `network_transport="tcp"`,
		`gen_ai_operation_name="execute_tool"`,
	} {
		assert.Contains(t, text, want, "the metric has %s", want)
	}
	var reportLine string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "mcp_server_operation_duration_seconds_count{") && strings.Contains(l, `gen_ai_tool_name="sales_report"`) {
			reportLine = l
		}
	}
	assert.Contains(t, reportLine, `error_type="tool_error"`, "a raw failure is a tool_error")
	assert.Contains(t, reportLine, `toolmw_error_code="internal"`, "with toolmw's code")
	assert.NotContains(t, text, "mcp_session_id", "no session id in the metric")
	assertNoSecrets(t, "metrics", text)

	require.NoError(t, cs.Close())
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 0, p.wait(t), "a clean exit; stderr: %s", p.stderr)
	spans, ctypes := col.received()
	require.NotEmpty(t, spans, "the spans were exported at shutdown at the latest")
	assert.Equal(t, "application/x-protobuf", ctypes[0], "OTLP/HTTP protobuf")
	for _, want := range []string{"tools/call greet", "tools/call sales_report", "tools/call crash", "mcp.method.name", "toolmw-demo"} {
		assert.Contains(t, string(spans), want, "the exported spans have %q", want)
	}
	assertNoSecrets(t, "spans", string(spans))
}

func TestTelemetryFlagErrors(t *testing.T) {
	p := startServer(t, "-otlp-endpoint", "127.0.0.1:4318")
	assert.Equal(t, 2, p.wait(t), "a usage error")
	assert.Contains(t, p.stderr.String(), "-otlp-endpoint must be an http:// or https:// URL", "the message says what to change")
}
