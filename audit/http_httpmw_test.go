package audit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
)

// TestHTTPRowsFromHTTPMW puts httpmw's layers inside audit.HTTP, with no
// CaptureHTTP and no NoteHTTPError: each rejection's code and public
// message, the request id and the identity still reach the row.
func TestHTTPRowsFromHTTPMW(t *testing.T) {
	var c capture
	verify := func(r *http.Request) (toolctx.Identity, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			return toolctx.Identity{Subject: "alice"}, nil
		case "Bearer denied":
			return toolctx.Identity{}, errs.PermissionDenied("this account may not use the server").WithCause(errors.New(canary))
		case "Bearer idp-down":
			return toolctx.Identity{}, errors.New(canary + ": identity provider unreachable")
		}
		return toolctx.Identity{}, httpmw.ErrNoCredentials
	}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	h := httpmw.Recover()(audit.HTTP(&c)(httpmw.RequestID(httpmw.Authenticate(verify)(httpmw.MaxBodyBytes(8)(mcp)))))

	do := func(token, body string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if body != "" {
			req = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		}
		req.Header.Set("X-Request-Id", "req-7")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	require.Equal(t, http.StatusOK, do("good", ""), "good credentials pass")
	require.Equal(t, http.StatusUnauthorized, do("", ""), "no credentials: 401")
	require.Equal(t, http.StatusForbidden, do("denied", ""), "denied: 403")
	require.Equal(t, http.StatusServiceUnavailable, do("idp-down", ""), "the verifier failed: 503")
	require.Equal(t, http.StatusRequestEntityTooLarge, do("good", "far more than eight bytes"), "too large: 413")

	rows := c.all()
	require.Len(t, rows, 5, "one row per request")
	for _, r := range rows {
		assert.Equal(t, "req-7", r.RequestID, "the request id set inside audit.HTTP reaches the row")
		assert.NotContains(t, r.Message, canary, "no raw cause in an HTTP row")
	}
	ok, unauth, denied, down, large := rows[0], rows[1], rows[2], rows[3], rows[4]
	assert.Equal(t, "alice", ok.Subject, "the identity set inside audit.HTTP reaches the row")
	assert.Equal(t, audit.OutcomeOK, ok.Outcome, "a success")
	assert.Equal(t, errs.CodeUnauthenticated, unauth.Code, "the rejection's code")
	assert.Equal(t, "authentication required", unauth.Message, "the rejection's public message")
	assert.Equal(t, errs.CodePermissionDenied, denied.Code, "the rejection's code")
	assert.Equal(t, "this account may not use the server", denied.Message, "the rejection's public message")
	assert.Equal(t, errs.CodeUnavailable, down.Code, "the verifier's failure")
	assert.Equal(t, "authentication is unavailable: retry later", down.Message, "what the client was told")
	assert.Equal(t, errs.CodeInvalidRequest, large.Code, "a body over the limit")
	assert.Equal(t, "alice", large.Subject, "authenticated before the limit applied")
}

// TestHTTPWriterHasNoHijackItCannotDo: the writer audit.HTTP hands on has
// Hijack only where the server's writer has it.
func TestHTTPWriterHasNoHijackItCannotDo(t *testing.T) {
	var c capture
	var isHijacker, isFlusher bool
	h := audit.HTTP(&c)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, isHijacker = w.(http.Hijacker)
		_, isFlusher = w.(http.Flusher)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) // a Flusher, not a Hijacker
	assert.False(t, isHijacker, "no Hijack over a writer without one")
	assert.True(t, isFlusher, "Flush over a writer with one (SSE streams need it)")
}
