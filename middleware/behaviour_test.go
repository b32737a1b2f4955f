package middleware_test

// One test per row of the behaviour table in DESIGN.md that needs no
// transport, through the recommended chain: After, Diagnostics, Normalize,
// Recover.

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

type rowResult struct {
	res   *toolctx.CallResult
	diag  []middleware.DiagnosticEvent
	after []middleware.CallInfo
	ran   bool
}

func runRow(t *testing.T, ctx context.Context, req *toolctx.Request, guard toolctx.Middleware, h toolctx.Handler) rowResult {
	t.Helper()
	var out rowResult
	diag, after := &diagRecorder{}, &afterRecorder{}
	logger, buf := bufLogger()
	inner := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		out.ran = true
		return h.CallTool(ctx, req)
	})
	chain := middleware.New(
		middleware.After(after.fn, middleware.WithFallbackLogger(logger)),
		middleware.Diagnostics(diag.fn, middleware.WithFallbackLogger(logger)),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		guard,
	)
	out.res = mustThen(t, chain, inner).CallTool(ctx, req)
	out.diag, out.after = diag.get(), after.get()
	require.NotNil(t, out.res, "the chain always returns a result")
	require.Len(t, out.after, 1, "After sees every call once")
	assert.Empty(t, buf.String(), "no hook fault")
	return out
}

func TestBehaviourInvalidArguments(t *testing.T) {
	req := newReq("weather")
	req.Arguments = toolctx.RawArguments(json.RawMessage(`{"city":1}`))
	r := runRow(t, context.Background(), req, nil, toolctx.Typed(func(context.Context, *toolctx.Request, struct {
		City string `json:"city"`
	}) (string, error) {
		return "x", nil
	}))
	require.True(t, r.res.IsError, "a failure")
	assert.Equal(t, errs.CodeInvalidArguments, r.res.Error.Code, "invalid arguments code")
	assert.Contains(t, r.res.Error.Message, "city: expected a string", "the validation feedback is public and names the field")
	assert.Empty(t, r.diag, "Diagnostics not called")
	assert.Equal(t, errs.CodeInvalidArguments, r.after[0].Outcome.Public.Code, "After records the code")
	assert.False(t, r.after[0].Outcome.Scrubbed, "and the feedback, not a raw message")
}

func TestBehaviourExplicitPublicError(t *testing.T) {
	secret := errors.New("pq: relation invoices_secret does not exist")
	r := runRow(t, context.Background(), newReq("invoice"), nil, handlerReturning(toolctx.ErrorResult(
		errs.NotFound("no such invoice").WithDetail(map[string]any{"id": "42"}).WithCause(secret))))
	assert.Equal(t, errs.Public{Code: errs.CodeNotFound, Message: "no such invoice", Detail: map[string]any{"id": "42"}}, *r.res.Error, "public message and detail only")
	assert.Empty(t, r.diag, "Diagnostics not called")
	assert.Equal(t, errs.CodeNotFound, r.after[0].Outcome.Public.Code, "After records its code")
	assert.ErrorIs(t, r.after[0].Cause(), secret, "the private cause stays on the server")

	own := &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "the city is not known"}}}
	r = runRow(t, context.Background(), newReq("weather"), nil, handlerReturning(own))
	assert.Equal(t, own.Content, r.res.Content, "a handler's own isError result keeps its content")
	assert.Equal(t, errs.CodeToolError, r.res.Error.Code, "tool_error")
	assert.Empty(t, r.diag, "Diagnostics not called")
}

func TestBehaviourRawError(t *testing.T) {
	raw := errors.New("dial tcp 10.0.0.5:5432: connection refused")
	r := runRow(t, context.Background(), newReq("report"), nil, handlerReturning(toolctx.ErrorResult(raw)))
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, *r.res.Error, "a generic message")
	assert.Nil(t, r.res.StructuredContent, "no structured data")
	require.Len(t, r.diag, 1, "Diagnostics called once")
	assert.Same(t, raw, r.diag[0].Cause(), "with the raw error")
	assert.Equal(t, "report", r.diag[0].Details.Tool(), "and the call details")
	assert.True(t, r.after[0].Outcome.Scrubbed, "After: scrubbed, so the audit row records the raw message")
	assert.Same(t, raw, r.after[0].Cause(), "After: the raw message")
}

func TestBehaviourPanic(t *testing.T) {
	r := runRow(t, context.Background(), newReq("crash"), nil, handlerPanicking("index out of range [3] with length 2"))
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, *r.res.Error, "the same generic result")
	require.Len(t, r.diag, 1, "Diagnostics called once")
	assert.NotEmpty(t, stackOf(r.diag[0]), "with the stack")
	var pe *errs.PanicError
	require.ErrorAs(t, r.after[0].Cause(), &pe, "After gets the panic error")
	assert.NotContains(t, pe.Error(), "goroutine", "the panic message, never the stack")

	// The server keeps running.
	r = runRow(t, context.Background(), newReq("ok"), nil, handlerReturning(toolctx.TextResult("fine")))
	assert.False(t, r.res.IsError, "the next call succeeds")
}

func TestBehaviourUnencodableOutput(t *testing.T) {
	r := runRow(t, context.Background(), newReq("stream"), nil, toolctx.Typed(func(context.Context, *toolctx.Request, struct{}) (chan int, error) {
		return make(chan int), nil
	}))
	assert.Equal(t, errs.CodeInternal, r.res.Error.Code, "a generic result")
	assert.Equal(t, errs.GenericMessage, r.res.Error.Message, "the generic message")
	require.Len(t, r.diag, 1, "Diagnostics called with the raw error")
	assert.ErrorContains(t, r.diag[0].Cause(), "encode structured result", "the encoding error")
}

func TestBehaviourGuardRejects(t *testing.T) {
	guard := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if req.Identity == nil || req.Identity.Subject != "admin" {
				return toolctx.ErrorResult(errs.PermissionDenied("admin scope required"))
			}
			return next.CallTool(ctx, req)
		})
	}
	r := runRow(t, context.Background(), newReq("delete"), guard, handlerReturning(toolctx.TextResult("deleted")))
	assert.False(t, r.ran, "the handler did not run")
	assert.Equal(t, errs.Public{Code: errs.CodePermissionDenied, Message: "admin scope required"}, *r.res.Error, "its public rejection")
	assert.Empty(t, r.diag, "Diagnostics not called")
	assert.Equal(t, errs.CodePermissionDenied, r.after[0].Outcome.Public.Code, "After records its code")
}

func TestBehaviourCanceledAndTimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		cancel()
		return toolctx.ErrorResult(errors.New("read tcp: use of closed connection"))
	})
	r := runRow(t, ctx, newReq("slow"), nil, h)
	assert.Equal(t, errs.CodeCanceled, r.res.Error.Code, "canceled")
	assert.Empty(t, r.diag, "Diagnostics suppressed after cancellation")
	assert.Equal(t, errs.CodeCanceled, r.after[0].Outcome.Public.Code, "After: canceled")

	ctx, cancel = context.WithCancel(context.Background())
	r = runRow(t, ctx, newReq("slow"), nil, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		cancel()
		panic("late panic")
	}))
	assert.Empty(t, r.diag, "Diagnostics suppressed after cancellation, even for a panic")

	r = runRow(t, context.Background(), newReq("slow"), middleware.Timeout(5*time.Millisecond), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		<-ctx.Done()
		return toolctx.ErrorResult(ctx.Err())
	}))
	assert.Equal(t, errs.CodeTimeout, r.res.Error.Code, "a deadline gives a public timeout result")
	assert.Empty(t, r.diag, "a timeout is expected, not a diagnostic")
	assert.Equal(t, errs.CodeTimeout, r.after[0].Outcome.Public.Code, "After: timeout")

	r = runRow(t, context.Background(), newReq("slow"), middleware.Timeout(5*time.Millisecond), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		<-ctx.Done()
		return toolctx.ErrorResult(errors.New("read tcp: connection reset by peer"))
	}))
	assert.Equal(t, errs.CodeTimeout, r.res.Error.Code, "a raw error after the deadline gives the public timeout")
	assert.Empty(t, r.diag, "a timeout is not a diagnostic, even with a raw cause")
	assert.True(t, r.after[0].Outcome.Scrubbed, "After: the raw message was scrubbed")
	assert.EqualError(t, r.after[0].Cause(), "read tcp: connection reset by peer", "After: the raw cause, for the row")

	r = runRow(t, context.Background(), newReq("slow"), middleware.Timeout(5*time.Millisecond), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		<-ctx.Done()
		panic("late bug")
	}))
	assert.Equal(t, errs.CodeInternal, r.res.Error.Code, "a panic after the deadline is an internal failure")
	require.Len(t, r.diag, 1, "a panic after Timeout's deadline is a diagnostic")
}

func TestBehaviourHookFaults(t *testing.T) {
	logger, buf := bufLogger()
	want := toolctx.TextResult("ok")
	raw := toolctx.ErrorResult(errors.New("raw"))
	for _, res := range []*toolctx.CallResult{want, raw} {
		h := mustThen(t, middleware.New(
			middleware.After(func(context.Context, middleware.CallInfo) { panic("audit down") }, middleware.WithFallbackLogger(logger)),
			middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) { panic("tracker down") }, middleware.WithFallbackLogger(logger)),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
		), handlerReturning(res))
		var got *toolctx.CallResult
		require.NotPanics(t, func() { got = h.CallTool(context.Background(), newReq("t")) }, "hook faults never reach the caller")
		if !res.IsError {
			assert.Same(t, want, got, "the success is unchanged")
		} else {
			assert.Equal(t, errs.GenericMessage, got.Error.Message, "the failure's response is unchanged")
		}
	}
	assert.Contains(t, buf.String(), "audit down", "the After fault is reported")
	assert.Contains(t, buf.String(), "tracker down", "the Diagnostics fault is reported")
}

// A panic in an interceptor between Normalize and Recover never becomes a
// result inside Diagnostics: Diagnostics reports it as it passes through,
// once, whether or not a Recover outside catches it.
func TestBehaviourPanicBetweenNormalizeAndRecover(t *testing.T) {
	broken := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			panic("interceptor bug: dsn=postgres://admin:hunter2@db")
		})
	}
	for _, outerRecover := range []bool{false, true} {
		diag, after := &diagRecorder{}, &afterRecorder{}
		logger, buf := bufLogger()
		var ms []toolctx.Middleware
		if outerRecover {
			ms = append(ms, middleware.Recover)
		}
		ms = append(ms,
			middleware.After(after.fn, middleware.WithFallbackLogger(logger)),
			middleware.Diagnostics(diag.fn, middleware.WithFallbackLogger(logger)),
			middleware.Normalize(errs.Normalizer{}),
			broken,
			middleware.Recover,
		)
		h := mustThen(t, middleware.New(ms...), handlerReturning(toolctx.TextResult("never")))
		call := func() { h.CallTool(context.Background(), newReq("t")) }
		if outerRecover {
			require.NotPanics(t, call, "the outer Recover catches the panic")
		} else {
			require.PanicsWithValue(t, "interceptor bug: dsn=postgres://admin:hunter2@db", call, "the panic continues with its value")
		}
		evs := diag.get()
		require.Len(t, evs, 1, "outer recover %v: Diagnostics reports the panic once", outerRecover)
		var pe *errs.PanicError
		require.ErrorAs(t, evs[0].Cause(), &pe, "as a PanicError")
		assert.Equal(t, "interceptor bug: dsn=postgres://admin:hunter2@db", pe.Value, "with the value")
		assert.NotEmpty(t, stackOf(evs[0]), "and the stack")
		assert.Equal(t, pe.Stack, stackOf(evs[0]), "the PanicError's stack")
		assert.Equal(t, errs.CodeInternal, evs[0].Code, "an internal failure")
		assert.Equal(t, "t", evs[0].Details.Tool(), "of the call")
		require.Len(t, after.get(), 1, "After reports it once too")
		assert.Empty(t, buf.String(), "no hook fault")
	}
}

// runtime.Goexit in a handler (t.FailNow in a test helper) cannot be
// stopped, but After and Diagnostics report it as an internal failure as
// it passes, and let it continue.
func TestBehaviourGoexit(t *testing.T) {
	diag, after := &diagRecorder{}, &afterRecorder{}
	logger, buf := bufLogger()
	h := mustThen(t, middleware.New(
		middleware.After(after.fn, middleware.WithFallbackLogger(logger)),
		middleware.Diagnostics(diag.fn, middleware.WithFallbackLogger(logger)),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	), toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		runtime.Goexit()
		return nil
	}))
	done := make(chan struct{})
	returned := false
	go func() {
		defer close(done)
		h.CallTool(context.Background(), newReq("t"))
		returned = true
	}()
	<-done
	assert.False(t, returned, "the Goexit continued: Recover cannot stop it")
	evs := diag.get()
	require.Len(t, evs, 1, "Diagnostics reports the Goexit once")
	assert.ErrorIs(t, evs[0].Cause(), errs.ErrGoexit, "as errs.ErrGoexit")
	var pe *errs.PanicError
	require.ErrorAs(t, evs[0].Cause(), &pe, "in a PanicError")
	assert.NotEmpty(t, stackOf(evs[0]), "with the stack")
	infos := after.get()
	require.Len(t, infos, 1, "After reports it once")
	assert.ErrorIs(t, infos[0].Cause(), errs.ErrGoexit, "After's cause")
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, infos[0].Outcome.Public, "an internal failure")
	assert.Empty(t, buf.String(), "no hook fault")
}

// Timeout decides "the deadline passed" from the clock, not from the
// context's timer, which runs late on a loaded machine: here the clock
// says two hours passed while the context's one-hour timer has not fired.
func TestTimeoutDecidesFromTheClock(t *testing.T) {
	var calls atomic.Int32
	start := time.Now()
	clock := func() time.Time {
		if calls.Add(1) == 1 {
			return start
		}
		return start.Add(2 * time.Hour)
	}
	var sawErr error
	raw := errors.New("read tcp: connection reset by peer")
	r := runRow(t, context.Background(), newReq("slow"), middleware.TimeoutWithClock(time.Hour, clock), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		sawErr = ctx.Err()
		return toolctx.ErrorResult(raw)
	}))
	require.NoError(t, sawErr, "the context's timer has not fired")
	assert.Equal(t, errs.Public{Code: errs.CodeTimeout, Message: "the tool call timed out after 1h0m0s"}, *r.res.Error, "past the deadline by the clock: a timeout")
	assert.Empty(t, r.diag, "not a diagnostic")
	assert.True(t, r.after[0].Outcome.Scrubbed, "the raw message was scrubbed from the caller's view")
	assert.Same(t, raw, r.after[0].Cause(), "the row keeps the raw cause")
}

// A handler's explicit public error returned after the deadline is
// replaced by the timeout for the caller, and kept in the record.
func TestTimeoutKeepsALatePublicError(t *testing.T) {
	for _, h := range []toolctx.Handler{
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			<-ctx.Done()
			return toolctx.ErrorResult(errs.NotFound("no such invoice").WithCause(errors.New("pq: secret")))
		}),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			<-ctx.Done()
			return &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "no such invoice"}}}
		}),
	} {
		r := runRow(t, context.Background(), newReq("slow"), middleware.Timeout(5*time.Millisecond), h)
		assert.Equal(t, errs.Public{Code: errs.CodeTimeout, Message: "the tool call timed out after 5ms"}, *r.res.Error, "the caller gets the timeout")
		assert.Empty(t, r.diag, "not a diagnostic")
		o := r.after[0].Outcome
		assert.True(t, o.Scrubbed, "the caller's message is not the cause's: the row records the cause")
		assert.Regexp(t, `^the tool call timed out after 5ms; after the deadline the handler returned (not_found|tool_error): no such invoice$`, errs.Describe(r.after[0].Cause()),
			"the row names the timeout and the handler's public error")
		assert.NotContains(t, errs.Describe(r.after[0].Cause()), "secret", "never the public error's private cause")
		assert.ErrorIs(t, r.after[0].Cause(), context.DeadlineExceeded, "the cause is the deadline")
	}
}

// A result is failed in one way a reader can see: a hand-built result with
// a public envelope but no IsError is a failure, never a success.
func TestBehaviourEnvelopeWithoutIsError(t *testing.T) {
	pub := errs.Public{Code: errs.CodeNotFound, Message: "no such invoice"}
	r := runRow(t, context.Background(), newReq("invoice"), nil, handlerReturning(&toolctx.CallResult{Error: &pub}))
	require.True(t, r.res.IsError, "the caller gets a failure")
	assert.Equal(t, pub, *r.res.Error, "with the envelope")
	assert.True(t, r.after[0].Outcome.Failed, "After sees a failure")
	assert.Equal(t, pub, r.after[0].Outcome.Public, "with its code and message")
	assert.Empty(t, r.diag, "a public failure: no diagnostic")
	assert.True(t, (&toolctx.CallResult{Error: &pub}).Failed(), "Failed says so")
}
