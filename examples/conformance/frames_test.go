package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// With toolmw, the go-sdk server answers an initialize go-sdk cannot
// decode with the kit's fixed message; the bare server quotes its decoder
// (the leak CheckFrames closes).
func TestGoSDKFramesAnsweredWithoutDecoderText(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	post := func(h http.Handler) string {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Host = "127.0.0.1"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Body.String()
	}
	for _, withToolmw := range []bool{false, true} {
		h, shutdown, err := handler(sdkGo, withToolmw, logger)
		require.NoError(t, err)
		body := post(h)
		shutdown()
		if withToolmw {
			assert.Contains(t, body, adapter.MsgFrameParams, "with toolmw: the kit's fixed message")
			assert.NotContains(t, body, "unmarshal", "with toolmw: no decoder text")
		} else {
			assert.Contains(t, body, "unmarshal", "bare go-sdk quotes its decoder (if this fails, go-sdk changed and CheckFrames may be moot)")
		}
	}
}
