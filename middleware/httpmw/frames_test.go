package httpmw_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// CheckFrames hands a frame the SDK decodes on unchanged, and answers the
// others itself with the guard's fixed error and the status the SDK would
// use; the next handler never sees them.
func TestCheckFrames(t *testing.T) {
	assert.Panics(t, func() { httpmw.CheckFrames(nil) })
	var seen []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = append(seen, string(b))
		w.WriteHeader(http.StatusTeapot)
	})
	h := httpmw.CheckFrames(mcpsdk.NewFrameGuard(mcpsdk.WithFallbackLogger(slog.New(slog.DiscardHandler))))(next)
	for _, tc := range []struct {
		frame  string
		status int
		body   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, http.StatusTeapot, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, http.StatusOK,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid request: its params do not match the method's"}}`},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, http.StatusBadRequest,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC 2.0 message this server can read"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":"x"}}`, http.StatusAccepted, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.frame)))
		assert.Equal(t, tc.status, rec.Code, tc.frame)
		if tc.body != "" {
			assert.JSONEq(t, tc.body, rec.Body.String(), tc.frame)
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		}
	}
	assert.Equal(t, []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`}, seen,
		"only the frame the SDK decodes reaches it, whole")
}
