package audit_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
)

// A runtime.Goexit in the handler under audit.HTTP gets its row, as the
// 500 it is, and goes on (it cannot be stopped): before, the row said 200.
func TestHTTPGoexitGetsA500Row(t *testing.T) {
	var c capture
	h := audit.HTTP(&c)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { runtime.Goexit() }))
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
		returned = true
	}()
	<-done
	assert.False(t, returned, "the Goexit went on")
	rows := c.all()
	require.Len(t, rows, 1, "one row")
	assert.Equal(t, http.StatusInternalServerError, rows[0].Status)
	assert.Equal(t, errs.CodeInternal, rows[0].Code)
}

type panickingEmitter struct{}

func (panickingEmitter) Emit(context.Context, audit.Record) { panic("CANARY-emitter") }

// An emitter that panics under audit.HTTP does not lose the row nor change
// the response: the row goes to the fallback logger (slog.Default, HTTP
// has no options), once.
func TestHTTPPanickingEmitterLogsTheRow(t *testing.T) {
	var buf bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))

	h := audit.HTTP(panickingEmitter{})(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	rec := httptest.NewRecorder()
	require.NotPanics(t, func() { h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil)) })
	assert.Equal(t, http.StatusTeapot, rec.Code, "the response is unchanged")
	assert.Equal(t, 1, strings.Count(buf.String(), "the emitter panicked"), "reported once")
	assert.Contains(t, buf.String(), "panic=CANARY-emitter")
	assert.Contains(t, buf.String(), "row.status=418", "with the row")
}
