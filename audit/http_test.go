package audit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(toolctx.WithRequestID(r.Context(), "req-42")))
	})
}

// auth lets "Bearer good" through as alice, answers 401 otherwise, and 503
// with a curated message when its identity provider fails.
func auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			next.ServeHTTP(w, r.WithContext(toolctx.WithIdentity(r.Context(), toolctx.Identity{Subject: "alice"})))
		case "Bearer idp-down":
			audit.NoteHTTPError(r.Context(), errs.Public{Code: errs.CodeUnavailable, Message: "authentication is unavailable"})
			http.Error(w, "authentication is unavailable", http.StatusServiceUnavailable)
		default:
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		}
	})
}

func TestHTTPRows(t *testing.T) {
	var c capture
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			panic(canary)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush() // streamable HTTP streams: Flush must survive the wrapper
		_, _ = w.Write([]byte("data: {}\n\n"))
	})
	h := requestID(audit.HTTP(&c)(auth(audit.CaptureHTTP(mcp))))

	do := func(path, token string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path+"?token=secret", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		func() {
			defer func() { _ = recover() }()
			h.ServeHTTP(rec, req)
		}()
		return rec
	}
	assert.Equal(t, http.StatusOK, do("/mcp", "good").Code)
	assert.Equal(t, http.StatusUnauthorized, do("/mcp", "").Code)
	assert.Equal(t, http.StatusServiceUnavailable, do("/mcp", "idp-down").Code)
	do("/boom", "good")

	rows := c.all()
	require.Len(t, rows, 4)
	for _, r := range rows {
		assert.Equal(t, audit.KindHTTP, r.Kind)
		assert.Equal(t, "req-42", r.RequestID)
		assert.Equal(t, http.MethodPost, r.Method)
		assert.NotContains(t, r.Path, "secret", "the query is not recorded")
		assert.NotContains(t, r.Message, canary)
		assert.False(t, r.Time.IsZero())
	}
	ok, unauth, down, boom := rows[0], rows[1], rows[2], rows[3]
	assert.Equal(t, 200, ok.Status)
	assert.Equal(t, audit.OutcomeOK, ok.Outcome)
	assert.Equal(t, "alice", ok.Subject)
	assert.Equal(t, "/mcp", ok.Path)
	assert.Empty(t, ok.Message)

	assert.Equal(t, 401, unauth.Status)
	assert.Equal(t, audit.OutcomeRejected, unauth.Outcome)
	assert.Equal(t, errs.CodeUnauthenticated, unauth.Code)
	assert.Equal(t, "Unauthorized", unauth.Message)
	assert.Empty(t, unauth.Subject)

	assert.Equal(t, 503, down.Status)
	assert.Equal(t, audit.OutcomeError, down.Outcome)
	assert.Equal(t, errs.CodeUnavailable, down.Code)
	assert.Equal(t, "authentication is unavailable", down.Message)

	assert.Equal(t, 500, boom.Status)
	assert.Equal(t, errs.CodeInternal, boom.Code)
	assert.Equal(t, "alice", boom.Subject)
}

// A nil emitter is a construction mistake, as for Interceptor: it used to
// make HTTP a silent no-op.
func TestHTTPNilEmitterFailsAtConstruction(t *testing.T) {
	assert.PanicsWithValue(t, "audit.HTTP: the emitter is nil", func() { audit.HTTP(nil) })
}
