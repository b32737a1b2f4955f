package httpmw_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
)

func TestRecoverWithoutHookLogsTheCause(t *testing.T) {
	const canary = "CANARY-recover-no-hook"
	var logBuf bytes.Buffer
	h := httpmw.Recover(httpmw.WithFallbackLogger(slog.New(slog.NewTextHandler(&logBuf, nil))))(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(canary) }))
	res, body := serve(h, httptest.NewRequest(http.MethodPost, "/", nil))
	assert.Equal(t, http.StatusInternalServerError, res.StatusCode, "a generic 500")
	assert.NotContains(t, body, canary, "the panic value never reaches the client")
	assert.Contains(t, logBuf.String(), canary, "without a hook the panic goes to the fallback logger, not nowhere")
}

// Each constructor takes options of its own type: an Authenticate option
// given to Recover is a compile error, not a panic at run time. (The
// statement httpmw.Recover(httpmw.WithRealm("x")) does not compile; this
// test checks the types that make it so.)
func TestOptionKindsAreTypes(t *testing.T) {
	recoverOpt := reflect.TypeFor[httpmw.RecoverOption]()
	authOpt := reflect.TypeFor[httpmw.AuthenticateOption]()
	both := reflect.TypeFor[httpmw.Option]()
	assert.False(t, authOpt.AssignableTo(recoverOpt), "an AuthenticateOption is not a RecoverOption")
	assert.False(t, recoverOpt.AssignableTo(authOpt), "a RecoverOption is not an AuthenticateOption")
	assert.True(t, both.AssignableTo(recoverOpt) && both.AssignableTo(authOpt), "an Option is both")
	for name, opt := range map[string]httpmw.AuthenticateOption{
		"WithRealm": httpmw.WithRealm("x"), "WithFailureStatus": httpmw.WithFailureStatus(http.StatusUnauthorized),
	} {
		_, ok := any(opt).(httpmw.RecoverOption)
		assert.False(t, ok, "%s cannot reach Recover even through a type assertion", name)
	}
	var _ httpmw.Option = httpmw.WithDiagnostics(func(context.Context, middleware.DiagnosticEvent) {})
	var _ httpmw.Option = httpmw.WithFallbackLogger(slog.Default())
}

// An option given a value it cannot use fails at construction, naming the
// constructor and the option; a nil option is skipped.
func TestOptionsFailAtConstruction(t *testing.T) {
	verify := func(*http.Request) (toolctx.Identity, error) { return toolctx.Identity{}, nil }
	assert.PanicsWithValue(t, "httpmw.Authenticate: WithFailureStatus(418): the status must be 503 or 401",
		func() { httpmw.Authenticate(verify, httpmw.WithFailureStatus(http.StatusTeapot)) }, "a status Authenticate cannot answer with")
	assert.PanicsWithValue(t, `httpmw.Authenticate: WithRealm(""): pass a realm, or leave the option out for "mcp"`,
		func() { httpmw.Authenticate(verify, httpmw.WithRealm("")) })
	assert.PanicsWithValue(t, "httpmw.Recover: WithDiagnostics(nil): pass a hook, or leave the option out to log the cause to the fallback logger",
		func() { httpmw.Recover(httpmw.WithDiagnostics(nil)) }, "a nil hook")
	assert.PanicsWithValue(t, "httpmw.Authenticate: WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()",
		func() { httpmw.Authenticate(verify, httpmw.WithFallbackLogger(nil)) }, "a nil logger")
	assert.PanicsWithValue(t, "httpmw.Authenticate: verify must not be nil", func() { httpmw.Authenticate(nil) }, "a nil verifier")
	assert.NotPanics(t, func() { httpmw.Recover(nil) }, "a nil option is skipped")
	assert.NotPanics(t, func() { httpmw.Authenticate(verify, nil, httpmw.WithRealm("r")) }, "a nil option is skipped")
}

// TestAuthenticateTypedNilError: a verifier that returns a nil *errs.Error
// as a non-nil error failed, it did not reject: a generic 503 with the
// cause to diagnostics, never a nil-pointer panic.
func TestAuthenticateTypedNilError(t *testing.T) {
	d := &diagSink{}
	verify := func(*http.Request) (toolctx.Identity, error) {
		var e *errs.Error
		return toolctx.Identity{}, e
	}
	called := false
	h := httpmw.Authenticate(verify, httpmw.WithDiagnostics(d.fn))(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	var res *http.Response
	var body string
	require.NotPanics(t, func() { res, body = serve(h, httptest.NewRequest(http.MethodPost, "/mcp", nil)) },
		"a typed nil is handled, not dereferenced")
	assert.False(t, called, "the request does not pass")
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "the verifier's failure: a generic 503")
	assert.Contains(t, body, `"code":-32002`, "JSON-RPC code errs.JSONRPCUnavailable")
	evs := d.events()
	require.Len(t, evs, 1, "the failure goes to diagnostics once")
	assert.Equal(t, errs.CodeUnavailable, evs[0].Code, "reported as the verifier being unavailable")
	assert.Error(t, evs[0].Cause(), "with a cause")
	assert.True(t, evs[0].Details.IsZero(), "no tool call is involved")
	_ = middleware.DiagnosticEvent{}
	_ = context.Background()
}

// A runtime.Goexit in the HTTP layer cannot be stopped, but it is
// reported to diagnostics once, as a panic error holding errs.ErrGoexit:
// before, it passed Recover unseen.
func TestRecoverReportsGoexit(t *testing.T) {
	d := &diagSink{}
	h := httpmw.Recover(httpmw.WithDiagnostics(d.fn))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { runtime.Goexit() }))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil))
	}()
	<-done
	evs := d.events()
	require.Len(t, evs, 1, "reported once")
	pe := errs.PanicOf(evs[0].Cause())
	require.NotNil(t, pe, "as a panic error")
	assert.Equal(t, errs.ErrGoexit, pe.Value)
}
