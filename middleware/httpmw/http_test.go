package httpmw_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
)

type diagSink struct {
	mu  sync.Mutex
	evs []middleware.DiagnosticEvent
}

func (d *diagSink) fn(_ context.Context, ev middleware.DiagnosticEvent) {
	d.mu.Lock()
	d.evs = append(d.evs, ev)
	d.mu.Unlock()
}

func (d *diagSink) events() []middleware.DiagnosticEvent {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]middleware.DiagnosticEvent(nil), d.evs...)
}

func serve(h http.Handler, r *http.Request) (*http.Response, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestHTTPRecover(t *testing.T) {
	const canary = "CANARY-dsn=postgres://u:p@db"
	for name, v := range map[string]any{
		"string":  canary,
		"error":   fmt.Errorf("wrap: %w", errors.New(canary)),
		"struct":  struct{ S string }{canary},
		"runtime": nil,
	} {
		t.Run(name, func(t *testing.T) {
			d := &diagSink{}
			h := httpmw.Recover(httpmw.WithDiagnostics(d.fn))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if v == nil {
					var m map[string]int
					//lint:ignore SA5000 the nil-map write is the deliberate panic under test
					m["x"]++
				}
				panic(v)
			}))
			res, body := serve(h, httptest.NewRequest(http.MethodPost, "/mcp", nil))
			assert.Equal(t, http.StatusInternalServerError, res.StatusCode)
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			assert.NotContains(t, body, "CANARY")
			assert.NotContains(t, body, "nil map")
			assert.Contains(t, body, `"code":-32603`)
			evs := d.events()
			require.Len(t, evs, 1)
			assert.True(t, evs[0].Details.IsZero(), "no tool details")
			assert.NotEmpty(t, stackOf(evs[0]))
			assert.Equal(t, errs.CodeInternal, evs[0].Code)
			var pe *errs.PanicError
			require.ErrorAs(t, evs[0].Cause(), &pe)
			if v != nil {
				assert.Contains(t, pe.Error(), canary)
			}
		})
	}

	t.Run("after the header was written", func(t *testing.T) {
		d := &diagSink{}
		ts := httptest.NewServer(httpmw.Recover(httpmw.WithDiagnostics(d.fn))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			panic(canary)
		})))
		defer ts.Close()
		res, err := http.Get(ts.URL)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "partial", string(b))
		assert.Len(t, d.events(), 1)
	})

	t.Run("ErrAbortHandler is re-panicked", func(t *testing.T) {
		h := httpmw.Recover()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			panic(http.ErrAbortHandler)
		}))
		assert.PanicsWithValue(t, http.ErrAbortHandler, func() {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		})
	})

	t.Run("a panicking hook does not change the response", func(t *testing.T) {
		var logBuf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logBuf, nil))
		h := httpmw.Recover(httpmw.WithDiagnostics(func(context.Context, middleware.DiagnosticEvent) { panic("hook") }),
			httpmw.WithFallbackLogger(logger))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			panic(canary)
		}))
		res, body := serve(h, httptest.NewRequest(http.MethodPost, "/", nil))
		assert.Equal(t, http.StatusInternalServerError, res.StatusCode)
		assert.NotContains(t, body, "CANARY")
		assert.Contains(t, logBuf.String(), "diagnostics hook panicked")
	})

	t.Run("no panic passes through", func(t *testing.T) {
		h := httpmw.Recover()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTeapot)
		}))
		res, _ := serve(h, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusTeapot, res.StatusCode)
	})
}

func TestRequestID(t *testing.T) {
	var got string
	h := httpmw.RequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = toolctx.RequestIDFrom(r.Context())
	}))
	for _, tc := range []struct {
		in   string
		keep bool
	}{
		{"abc-123_X.y:z", true},
		{strings.Repeat("a", httpmw.MaxRequestIDLen), true},
		{"", false},
		{strings.Repeat("a", httpmw.MaxRequestIDLen+1), false},
		{"has space", false},
		{"new\nline", false},
		{"<script>", false},
		{"ünïcode", false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		if tc.in != "" {
			r.Header[httpmw.RequestIDHeader] = []string{tc.in}
		}
		res, _ := serve(h, r)
		out := res.Header.Get(httpmw.RequestIDHeader)
		assert.Equal(t, out, got)
		if tc.keep {
			assert.Equal(t, tc.in, out)
		} else {
			assert.NotEqual(t, tc.in, out)
			assert.Regexp(t, `^[0-9a-f]{32}$`, out)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	errIDP := errors.New("CANARY dial tcp 10.0.0.7:443: connection refused")
	verify := func(r *http.Request) (toolctx.Identity, error) {
		switch r.Header.Get("Authorization") {
		case "":
			return toolctx.Identity{}, httpmw.ErrNoCredentials
		case "Bearer good":
			return toolctx.Identity{Subject: "alice", Scopes: []string{"tools:read"}}, nil
		case "Bearer banned":
			return toolctx.Identity{}, fmt.Errorf("policy: %w", errs.PermissionDenied("this account may not use the server").WithCause(errors.New("CANARY rule 7")))
		case "Bearer expired":
			return toolctx.Identity{}, errs.Unauthenticated("the token has expired").WithCause(errors.New("CANARY exp=1700000000"))
		}
		return toolctx.Identity{}, errIDP
	}
	var seen *toolctx.Identity
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = toolctx.IdentityFrom(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
	req := func(auth string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}

	d := &diagSink{}
	h := httpmw.Authenticate(verify, httpmw.WithDiagnostics(d.fn))(next)

	res, _ := serve(h, req("Bearer good"))
	assert.Equal(t, http.StatusNoContent, res.StatusCode)
	require.NotNil(t, seen)
	assert.Equal(t, toolctx.Identity{Subject: "alice", Scopes: []string{"tools:read"}}, *seen)

	seen = nil
	res, body := serve(h, req(""))
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Equal(t, `Bearer realm="mcp"`, res.Header.Get("WWW-Authenticate"))
	assert.Contains(t, body, "authentication required")
	assert.Nil(t, seen)

	res, body = serve(h, req("Bearer expired"))
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Contains(t, body, "the token has expired")
	assert.NotContains(t, body, "CANARY")

	res, body = serve(h, req("Bearer banned"))
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`)
	assert.Contains(t, body, "this account may not use the server")
	assert.NotContains(t, body, "CANARY")
	assert.Empty(t, d.events(), "expected rejections are not diagnostics")

	res, body = serve(h, req("Bearer other"))
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	assert.NotContains(t, body, "CANARY")
	assert.NotContains(t, body, "10.0.0.7")
	assert.Nil(t, seen)
	evs := d.events()
	require.Len(t, evs, 1)
	assert.Same(t, errIDP, evs[0].Cause())
	assert.True(t, evs[0].Details.IsZero())
	assert.Equal(t, errs.CodeUnavailable, evs[0].Code)

	h401 := httpmw.Authenticate(verify, httpmw.WithFailureStatus(http.StatusUnauthorized), httpmw.WithRealm("x"))(next)
	res, body = serve(h401, req("Bearer other"))
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Equal(t, `Bearer realm="x"`, res.Header.Get("WWW-Authenticate"))
	assert.NotContains(t, body, "CANARY")

	assert.Panics(t, func() { httpmw.Authenticate(nil) })
}

func TestMaxBodyBytes(t *testing.T) {
	const limit = 16
	var called bool
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called = true
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read request body error", http.StatusBadRequest)
			return
		}
		_, _ = w.Write(b)
	})
	h := httpmw.MaxBodyBytes(limit)(echo)

	res, body := serve(h, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("small")))
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "small", body)

	called = false
	res, _ = serve(h, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("x", limit+1))))
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	assert.False(t, called, "a declared length over the limit is refused before the handler")

	// Unknown length (chunked): detected as the body is read, before the
	// handler.
	r := httptest.NewRequest(http.MethodPost, "/", io.MultiReader(strings.NewReader(strings.Repeat("x", limit+10))))
	r.ContentLength = -1
	res, _ = serve(h, r)
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	assert.False(t, called, "the body is read before the handler")

	res, _ = serve(h, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusOK, res.StatusCode)

	assert.Panics(t, func() { httpmw.MaxBodyBytes(0) })
}

func stackOf(ev middleware.DiagnosticEvent) []byte {
	if pe := errs.PanicOf(ev.Cause()); pe != nil {
		return pe.Stack
	}
	return nil
}
