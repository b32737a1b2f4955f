package serve

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// Handler puts httpmw.CheckFrames in front of both of go-sdk's HTTP
// handlers: a request go-sdk cannot decode into its params type is answered
// with the kit's fixed message, never with go-sdk's decoder text (which
// names *mcp.CallToolParamsRaw and encoding/json's words).
func TestHandlerAnswersUndecodableFramesItself(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	server := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	rows := audit.EmitterFunc(func(context.Context, audit.Record) {})
	h, err := Handler(HTTPConfig{Name: "t", Server: server, Audit: rows, Logger: logger, Stateless: true,
		SessionIdle: time.Minute, MaxSessions: 10, WriteTimeout: time.Minute})
	require.NoError(t, err)

	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":5}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":{}}}`,
		`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`,
	} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(frame))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		for _, word := range []string{"unmarshal", "json:", "mcp.", "Go value", "wireDecode", "interface {}"} {
			assert.NotContains(t, body, word, "frame %s: the answer quotes go-sdk's decoder", frame)
		}
		assert.True(t, strings.Contains(body, adapter.MsgFrameParams) || strings.Contains(body, adapter.MsgFrameEnvelope),
			"frame %s: the answer is the kit's fixed message; got %d %q", frame, rec.Code, body)
	}
}
