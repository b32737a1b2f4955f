package middleware_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// bufLogger returns a logger writing text records to a buffer.
func bufLogger() (*slog.Logger, *syncbuf.Buffer) {
	buf := &syncbuf.Buffer{}
	return slog.New(slog.NewTextHandler(buf, nil)), buf
}

func newReq(tool string) *toolctx.Request {
	return &toolctx.Request{
		Tool: tool, CallID: adapter.NewCallID(), Transport: toolctx.TransportInMemory,
		Meta:     map[string]any{"progressToken": "p1"},
		Identity: &toolctx.Identity{Subject: "alice", Scopes: []string{"read"}},
	}
}

func handlerReturning(r *toolctx.CallResult) toolctx.Handler {
	return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return r })
}

func handlerPanicking(v any) toolctx.Handler {
	return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { panic(v) })
}

func nilDeref() toolctx.Handler {
	return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		var p *struct{ X int }
		return toolctx.TextResult(fmt.Sprint(p.X))
	})
}

func mustThen(t *testing.T, c middleware.Chain, h toolctx.Handler) toolctx.Handler {
	t.Helper()
	out, err := c.Then(h)
	require.NoError(t, err, "Then")
	return out
}

type panicStruct struct{ Secret string }

func TestRecover(t *testing.T) {
	errVal := errors.New("boom error")
	cases := []struct {
		name  string
		h     toolctx.Handler
		check func(t *testing.T, pe *errs.PanicError)
	}{
		{"string", handlerPanicking("boom"), func(t *testing.T, pe *errs.PanicError) {
			assert.Equal(t, "boom", pe.Value, "string value")
		}},
		{"error", handlerPanicking(errVal), func(t *testing.T, pe *errs.PanicError) {
			assert.ErrorIs(t, pe, errVal, "error value unwraps")
		}},
		{"struct", handlerPanicking(panicStruct{"s"}), func(t *testing.T, pe *errs.PanicError) {
			assert.Equal(t, panicStruct{"s"}, pe.Value, "struct value")
		}},
		{"nil", handlerPanicking(nil), func(t *testing.T, pe *errs.PanicError) {
			var pne *runtime.PanicNilError
			assert.ErrorAs(t, pe, &pne, "panic(nil) is a *runtime.PanicNilError")
		}},
		{"nil dereference", nilDeref(), func(t *testing.T, pe *errs.PanicError) {
			var re runtime.Error
			require.ErrorAs(t, pe, &re, "a nil dereference is a runtime.Error")
			assert.Contains(t, re.Error(), "nil pointer dereference", "runtime error text")
			assert.Contains(t, string(pe.Stack), "nilDeref", "the stack names the panicking function")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := middleware.Recover(c.h)
			var res *toolctx.CallResult
			require.NotPanics(t, func() { res = h.CallTool(context.Background(), newReq("t")) }, "Recover stops the panic")
			require.NotNil(t, res, "a result")
			assert.True(t, res.IsError, "a failed result")
			var pe *errs.PanicError
			require.ErrorAs(t, res.Cause(), &pe, "the cause is a *errs.PanicError")
			assert.NotEmpty(t, pe.Stack, "the stack is kept")
			assert.Contains(t, string(pe.Stack), "panic", "the stack is the panicking goroutine's")
			c.check(t, pe)
		})
	}

	// The server keeps running: the same handler serves later calls,
	// concurrently.
	calls := 0
	var mu sync.Mutex
	h := middleware.Recover(toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n%2 == 0 {
			panic("even")
		}
		return toolctx.TextResult("odd")
	}))
	var wg sync.WaitGroup
	var failed, ok sync.Map
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.CallTool(context.Background(), newReq("t"))
			if r.IsError {
				failed.Store(i, true)
			} else {
				ok.Store(i, true)
			}
		}()
	}
	wg.Wait()
	count := func(m *sync.Map) (n int) {
		m.Range(func(any, any) bool { n++; return true })
		return n
	}
	assert.Equal(t, 25, count(&failed), "half the calls panicked and were recovered")
	assert.Equal(t, 25, count(&ok), "the other half succeeded")

	success := toolctx.TextResult("ok")
	assert.Same(t, success, middleware.Recover(handlerReturning(success)).CallTool(context.Background(), newReq("t")), "Recover passes results through")
}

func TestNormalizeMiddleware(t *testing.T) {
	n := errs.Normalizer{Map: func(err error) *errs.Error {
		if errors.Is(err, sql.ErrNoRows) {
			return errs.NotFound("no such record")
		}
		return nil
	}, GenericMessage: "it broke"}
	m := middleware.Normalize(n)

	success := toolctx.TextResult("ok")
	assert.Same(t, success, m(handlerReturning(success)).CallTool(context.Background(), newReq("t")), "success passes through untouched")

	raw := fmt.Errorf("select: %w", sql.ErrNoRows)
	res := m(handlerReturning(toolctx.ErrorResult(raw))).CallTool(context.Background(), newReq("t"))
	require.NotNil(t, res.Error, "envelope filled")
	assert.Equal(t, errs.Public{Code: errs.CodeNotFound, Message: "no such record"}, *res.Error, "the mapping applies")
	assert.Same(t, raw, res.Cause(), "the raw cause is kept for the interceptors outside")

	res = m(handlerReturning(toolctx.ErrorResult(errors.New("secret")))).CallTool(context.Background(), newReq("t"))
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: "it broke"}, *res.Error, "the generic message of the normalizer")
	assert.Equal(t, []toolctx.Content{&toolctx.Text{Text: "it broke"}}, res.Content, "the public message is the content")

	res = m(handlerReturning(nil)).CallTool(context.Background(), newReq("t"))
	require.NotNil(t, res, "a nil result becomes a failure")
	assert.ErrorIs(t, res.Cause(), toolctx.ErrNilResult, "ErrNilResult")

	res = m(middleware.Recover(handlerPanicking(sql.ErrNoRows))).CallTool(context.Background(), newReq("t"))
	assert.Equal(t, errs.CodeInternal, res.Error.Code, "a panic is scrubbed even when the mapping knows its value")
}

type diagRecorder struct {
	mu     sync.Mutex
	events []middleware.DiagnosticEvent
}

func (d *diagRecorder) fn(_ context.Context, ev middleware.DiagnosticEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, ev)
}

func (d *diagRecorder) get() []middleware.DiagnosticEvent {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]middleware.DiagnosticEvent(nil), d.events...)
}

func TestDiagnosticsCalled(t *testing.T) {
	raw := errors.New("dial tcp 10.0.0.5:5432: connection refused")
	cases := []struct {
		name   string
		h      toolctx.Handler
		ctx    func() context.Context
		stack  bool
		errChk func(t *testing.T, err error)
	}{
		{"raw error", handlerReturning(toolctx.ErrorResult(raw)), context.Background, false, func(t *testing.T, err error) {
			assert.Same(t, raw, err, "the raw error")
		}},
		{"panic", handlerPanicking("boom"), context.Background, true, func(t *testing.T, err error) {
			var pe *errs.PanicError
			require.ErrorAs(t, err, &pe, "a *errs.PanicError")
			assert.Equal(t, "boom", pe.Value, "the panic value")
		}},
		{"nil result", handlerReturning(nil), context.Background, false, func(t *testing.T, err error) {
			assert.ErrorIs(t, err, toolctx.ErrNilResult, "ErrNilResult")
		}},
		{"panic after deadline", handlerPanicking("late"), func() context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return ctx
		}, true, func(t *testing.T, err error) {
			var pe *errs.PanicError
			assert.ErrorAs(t, err, &pe, "a panic is unexpected even after the deadline")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Diagnostics outside Normalize (the recommended order) and
			// Diagnostics classifying on its own.
			for name, chain := range map[string]middleware.Chain{
				"with Normalize":    middleware.New(nil, middleware.Normalize(errs.Normalizer{}), middleware.Recover),
				"without Normalize": middleware.New(middleware.Recover),
			} {
				rec := &diagRecorder{}
				h := mustThen(t, middleware.New(middleware.Diagnostics(rec.fn)).Extend(chain), c.h)
				req := newReq("lookup")
				res := h.CallTool(c.ctx(), req)
				if name == "with Normalize" {
					require.NotNil(t, res, "%s: Normalize always gives a result", name)
				}
				evs := rec.get()
				require.Len(t, evs, 1, "called exactly once")
				ev := evs[0]
				c.errChk(t, ev.Cause())
				if c.stack {
					assert.NotEmpty(t, stackOf(ev), "the stack of a panic")
				} else {
					assert.Nil(t, stackOf(ev), "no stack for an error")
				}
				assert.Equal(t, errs.CodeInternal, ev.Code, "the code the client got")
				assert.Equal(t, "lookup", ev.Details.Tool(), "details name the tool")
				assert.Equal(t, req.CallID, ev.Details.CallID(), "details carry the call id")
				assert.Equal(t, "alice", ev.Details.Subject(), "details carry the subject")
			}
		})
	}
}

func TestDiagnosticsNotCalled(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	bg := context.Background()
	cases := []struct {
		name string
		ctx  context.Context
		h    toolctx.Handler
	}{
		{"success", bg, handlerReturning(toolctx.TextResult("ok"))},
		{"invalid arguments", bg, toolctx.Typed(func(context.Context, *toolctx.Request, struct{ N int }) (int, error) { return 0, nil })},
		{"explicit public error", bg, handlerReturning(toolctx.ErrorResult(errs.NotFound("no such thing").WithCause(errors.New("secret"))))},
		{"explicit internal error", bg, handlerReturning(toolctx.ErrorResult(errs.Internal("we know")))},
		{"handler's own isError", bg, handlerReturning(&toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "no"}}})},
		{"raw error after client cancel", canceled, handlerReturning(toolctx.ErrorResult(errors.New("secret")))},
		{"panic after client cancel", canceled, handlerPanicking("late")},
		{"raw error after the deadline", expired, handlerReturning(toolctx.ErrorResult(errors.New("secret")))},
		{"context error after client cancel", canceled, handlerReturning(toolctx.ErrorResult(fmt.Errorf("query: %w", context.Canceled)))},
		{"deadline error after the deadline", expired, handlerReturning(toolctx.ErrorResult(fmt.Errorf("query: %w", context.DeadlineExceeded)))},
	}
	for _, c := range cases {
		for _, withNormalize := range []bool{true, false} {
			rec := &diagRecorder{}
			chain := middleware.New(middleware.Diagnostics(rec.fn))
			if withNormalize {
				chain = chain.Append(middleware.Normalize(errs.Normalizer{}))
			}
			h := mustThen(t, chain.Append(middleware.Recover), c.h)
			req := newReq("t")
			req.Arguments = toolctx.RawArguments(json.RawMessage(`{"N":"x"}`))
			res := h.CallTool(c.ctx, req)
			require.NotNil(t, res, "%s: a result", c.name)
			assert.Empty(t, rec.get(), "%s (normalize %v): Diagnostics not called", c.name, withNormalize)
		}
	}

	// A context error the live call's context does not explain (the
	// handler's own inner timeout, say) is a raw failure: reported.
	for _, cause := range []error{fmt.Errorf("query: %w", context.Canceled), fmt.Errorf("dial: %w", context.DeadlineExceeded)} {
		rec := &diagRecorder{}
		res := mustThen(t, middleware.New(middleware.Diagnostics(rec.fn), middleware.Normalize(errs.Normalizer{}), middleware.Recover),
			handlerReturning(toolctx.ErrorResult(cause))).CallTool(bg, newReq("t"))
		assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, *res.Error, "%v: while the call is live it is scrubbed", cause)
		require.Len(t, rec.get(), 1, "%v: Diagnostics is called for a context error of the handler's own", cause)
		assert.Same(t, cause, rec.get()[0].Cause(), "%v: with the raw error", cause)
	}

	// A nil hook is a construction mistake: it fails at construction.
	assert.PanicsWithValue(t, "middleware.Diagnostics: the hook is nil", func() { middleware.Diagnostics(nil) }, "a nil hook panics at construction")
}

func TestDiagnosticsWithNormalizerMapping(t *testing.T) {
	rec := &diagRecorder{}
	n := errs.Normalizer{Map: func(err error) *errs.Error {
		if errors.Is(err, sql.ErrNoRows) {
			return errs.NotFound("none")
		}
		return nil
	}}
	h := mustThen(t, middleware.New(middleware.Diagnostics(rec.fn, middleware.WithNormalizer(n)), middleware.Recover), handlerReturning(toolctx.ErrorResult(sql.ErrNoRows)))
	h.CallTool(context.Background(), newReq("t"))
	assert.Empty(t, rec.get(), "a mapped error is expected, not a diagnostic")
}

func TestDiagnosticsHookPanics(t *testing.T) {
	logger, buf := bufLogger()
	inner := toolctx.Normalized(context.Background(), toolctx.ErrorResult(errors.New("raw")), errs.Normalizer{})
	hookCalls := 0
	h := mustThen(t, middleware.New(middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {
		hookCalls++
		panic("hook exploded")
	}, middleware.WithFallbackLogger(logger))), handlerReturning(inner))
	var res *toolctx.CallResult
	require.NotPanics(t, func() { res = h.CallTool(context.Background(), newReq("lookup")) }, "a panicking hook is contained")
	assert.Same(t, inner, res, "the result is unchanged")
	assert.Equal(t, 1, hookCalls, "the hook ran once")
	out := buf.String()
	assert.Equal(t, 1, strings.Count(out, "diagnostics hook panicked"), "logged once to the fallback logger: %s", out)
	assert.Contains(t, out, "hook exploded", "the log names the hook's panic")
	assert.Contains(t, out, "tool=lookup", "the log identifies the call")
}

type afterRecorder struct {
	mu    sync.Mutex
	infos []middleware.CallInfo
}

func (a *afterRecorder) fn(_ context.Context, info middleware.CallInfo) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.infos = append(a.infos, info)
}

func (a *afterRecorder) get() []middleware.CallInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]middleware.CallInfo(nil), a.infos...)
}

func TestAfter(t *testing.T) {
	rec := &afterRecorder{}
	const sleep = 5 * time.Millisecond
	raw := errors.New("raw secret")
	var next *toolctx.CallResult
	h := mustThen(t, middleware.New(middleware.After(rec.fn), middleware.Normalize(errs.Normalizer{}), middleware.Recover),
		toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			time.Sleep(sleep)
			return next
		}))

	next = toolctx.TextResult("ok")
	before := time.Now()
	req := newReq("weather")
	res := h.CallTool(context.Background(), req)
	after := time.Now()
	assert.Same(t, next, res, "After returns the result unchanged")
	infos := rec.get()
	require.Len(t, infos, 1, "called once")
	info := infos[0]
	assert.Equal(t, "weather", info.Details.Tool(), "details")
	assert.Equal(t, req.CallID, info.Details.CallID(), "call id")
	assert.False(t, info.Start.Before(before.Add(-time.Millisecond)), "start %v not before the call %v", info.Start, before)
	assert.False(t, info.Start.After(after), "start %v not after the call returned %v", info.Start, after)
	assert.GreaterOrEqual(t, info.Duration, sleep, "duration covers the handler")
	assert.LessOrEqual(t, info.Duration, after.Sub(before)+time.Millisecond, "duration within the call")
	assert.Equal(t, toolctx.Outcome{}, info.Outcome, "success outcome")
	assert.NoError(t, info.Cause(), "no cause on success")
	assert.Same(t, req, info.Request, "the hook has the request")
	assert.Same(t, res, info.Result, "and the final result")
	assert.WithinDuration(t, time.Now(), info.Start, time.Minute, "Start is wall-clock time")

	next = toolctx.ErrorResult(raw)
	h.CallTool(context.Background(), newReq("weather"))
	info = rec.get()[1]
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, Scrubbed: true}, info.Outcome, "raw failure outcome")
	assert.Same(t, raw, info.Cause(), "the raw cause")

	next = toolctx.ErrorResult(errs.NotFound("none").WithCause(raw))
	res = h.CallTool(context.Background(), newReq("weather"))
	info = rec.get()[2]
	assert.Same(t, res, info.Result, "the final result, as normalized inside After")
	assert.True(t, info.Result.IsError, "a failure")
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeNotFound, Message: "none"}}, info.Outcome, "public failure outcome")
	assert.ErrorIs(t, info.Cause(), raw, "the public error and its private cause")

	assert.PanicsWithValue(t, "middleware.After: the hook is nil", func() { middleware.After(nil) }, "a nil hook panics at construction")
}

func TestAfterWithoutNormalizeUsesWithNormalizer(t *testing.T) {
	rec := &afterRecorder{}
	n := errs.Normalizer{Map: func(err error) *errs.Error {
		if errors.Is(err, sql.ErrNoRows) {
			return errs.NotFound("none")
		}
		return nil
	}}
	h := middleware.After(rec.fn, middleware.WithNormalizer(n))(handlerReturning(toolctx.ErrorResult(sql.ErrNoRows)))
	h.CallTool(context.Background(), newReq("t"))
	require.Len(t, rec.get(), 1, "called once")
	assert.Equal(t, errs.CodeNotFound, rec.get()[0].Outcome.Public.Code, "classified with the normalizer")
	assert.False(t, rec.get()[0].Outcome.Scrubbed, "a mapped error is not scrubbed")

	rec = &afterRecorder{}
	middleware.After(rec.fn)(handlerReturning(nil)).CallTool(context.Background(), newReq("t"))
	require.Len(t, rec.get(), 1, "called once for a nil result")
	assert.ErrorIs(t, rec.get()[0].Cause(), toolctx.ErrNilResult, "a nil result's cause")
	assert.True(t, rec.get()[0].Outcome.Failed, "a nil result is a failure")
}

func TestAfterPanicThrough(t *testing.T) {
	for _, v := range []any{"boom", errors.New("boom err"), panicStruct{"s"}} {
		rec := &afterRecorder{}
		logger, buf := bufLogger()
		h := middleware.After(rec.fn, middleware.WithFallbackLogger(logger))(handlerPanicking(v))
		assert.PanicsWithValue(t, v, func() { h.CallTool(context.Background(), newReq("t")) }, "the panic continues outward with its value")
		infos := rec.get()
		require.Len(t, infos, 1, "the panic is reported once")
		var pe *errs.PanicError
		require.ErrorAs(t, infos[0].Cause(), &pe, "the cause is a *errs.PanicError")
		assert.Equal(t, v, pe.Value, "the panic value")
		assert.NotEmpty(t, pe.Stack, "the stack")
		assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, Scrubbed: true}, infos[0].Outcome, "reported as an internal failure")
		assert.Empty(t, buf.String(), "nothing logged when the hook is fine")
	}

	// A hook that panics while reporting a panic: logged once, and the
	// original panic still continues.
	logger, buf := bufLogger()
	h := middleware.After(func(context.Context, middleware.CallInfo) { panic("hook exploded") }, middleware.WithFallbackLogger(logger))(handlerPanicking("original"))
	assert.PanicsWithValue(t, "original", func() { h.CallTool(context.Background(), newReq("t")) }, "the handler's panic continues, not the hook's")
	assert.Equal(t, 1, strings.Count(buf.String(), "after hook panicked"), "the hook's panic is logged once")
}

func TestAfterHookPanics(t *testing.T) {
	logger, buf := bufLogger()
	for _, want := range []*toolctx.CallResult{toolctx.TextResult("ok"), toolctx.ErrorResult(errors.New("raw"))} {
		before := strings.Count(buf.String(), "after hook panicked")
		h := middleware.After(func(context.Context, middleware.CallInfo) { panic("hook exploded") }, middleware.WithFallbackLogger(logger))(handlerReturning(want))
		var res *toolctx.CallResult
		require.NotPanics(t, func() { res = h.CallTool(context.Background(), newReq("lookup")) }, "a panicking hook is contained")
		assert.Same(t, want, res, "the result is unchanged")
		assert.Equal(t, before+1, strings.Count(buf.String(), "after hook panicked"), "logged once")
	}
	assert.Contains(t, buf.String(), "hook exploded", "the log names the panic")
	assert.Contains(t, buf.String(), "tool=lookup", "the log identifies the call")
}

func TestAfterGoexit(t *testing.T) {
	rec := &afterRecorder{}
	logger, buf := bufLogger()
	h := middleware.After(rec.fn, middleware.WithFallbackLogger(logger))(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
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
	assert.False(t, returned, "Goexit ends the goroutine: After lets it continue")
	infos := rec.get()
	require.Len(t, infos, 1, "a Goexit is reported once")
	var pe *errs.PanicError
	require.ErrorAs(t, infos[0].Cause(), &pe, "as a *errs.PanicError")
	assert.ErrorIs(t, pe, errs.ErrGoexit, "whose value is errs.ErrGoexit")
	assert.NotEmpty(t, pe.Stack, "with the stack where the Goexit was seen")
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, Scrubbed: true}, infos[0].Outcome, "an internal failure")
	assert.Equal(t, "t", infos[0].Details.Tool(), "of the call")
	assert.Empty(t, buf.String(), "nothing logged")

	// A hook that calls Goexit is logged; the Goexit continues.
	logger, buf = bufLogger()
	h = middleware.After(func(context.Context, middleware.CallInfo) { runtime.Goexit() }, middleware.WithFallbackLogger(logger))(handlerReturning(toolctx.TextResult("ok")))
	done = make(chan struct{})
	go func() {
		defer close(done)
		h.CallTool(context.Background(), newReq("t"))
	}()
	<-done
	assert.Contains(t, buf.String(), "runtime.Goexit", "a Goexit in the hook is logged")
}

func TestWhenToolsNot(t *testing.T) {
	var tagged []string
	tag := func(name string) toolctx.Middleware {
		return func(next toolctx.Handler) toolctx.Handler {
			return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
				tagged = append(tagged, name+":"+req.Tool)
				return next.CallTool(ctx, req)
			})
		}
	}
	h := mustThen(t, middleware.New(
		middleware.When(middleware.Tools("search", "fetch"), tag("io")),
		middleware.When(middleware.Not(middleware.Tools("search")), tag("notsearch")),
	), handlerReturning(toolctx.TextResult("ok")))
	for _, tool := range []string{"search", "fetch", "other"} {
		res := h.CallTool(context.Background(), newReq(tool))
		assert.False(t, res.IsError, "%s: the handler ran", tool)
	}
	assert.Equal(t, []string{"io:search", "io:fetch", "notsearch:fetch", "notsearch:other"}, tagged, "interceptors applied only where they match")

	names := []string{"a"}
	m := middleware.Tools(names...)
	names[0] = "b"
	assert.True(t, m(&toolctx.Request{Tool: "a"}), "Tools copies its names")

	assert.PanicsWithValue(t, "middleware.When: the matcher is nil", func() { middleware.When(nil, tag("x")) },
		"a nil matcher fails at construction, not at the first call")
	assert.PanicsWithValue(t, "middleware.When: the interceptor is nil", func() { middleware.When(middleware.Tools("a"), nil) },
		"a nil interceptor fails at construction, not at the first call")
	assert.False(t, middleware.Tools()(&toolctx.Request{Tool: "a"}), "Tools() matches nothing")
}

func TestTimeout(t *testing.T) {
	waitDone := toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		<-ctx.Done()
		return toolctx.ErrorResult(fmt.Errorf("query aborted: %w", ctx.Err()))
	})

	res := mustThen(t, middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.Timeout(10*time.Millisecond)), waitDone).
		CallTool(context.Background(), newReq("slow"))
	require.True(t, res.IsError, "deadline is a failure")
	assert.Equal(t, errs.Public{Code: errs.CodeTimeout, Message: "the tool call timed out after 10ms"}, *res.Error, "a public timeout result")
	assert.False(t, res.Scrubbed(), "an error that wraps the deadline is a public timeout")
	assert.Contains(t, fmt.Sprintf("%+v", res.Cause()), "query aborted", "the handler's raw error stays the private cause")
	assert.NotContains(t, res.Cause().Error(), "query aborted", "which the cause's text does not show")

	// A raw error returned late is scrubbed: the caller gets the timeout,
	// the audit row the raw message.
	reset := toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		<-ctx.Done()
		return toolctx.ErrorResult(errors.New("read tcp: connection reset by peer"))
	})
	res = mustThen(t, middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.Timeout(5*time.Millisecond)), reset).
		CallTool(context.Background(), newReq("slow"))
	require.True(t, res.IsError, "deadline is a failure")
	assert.Equal(t, errs.Public{Code: errs.CodeTimeout, Message: "the tool call timed out after 5ms"}, *res.Error, "the caller gets the timeout")
	assert.True(t, res.Scrubbed(), "the raw message was scrubbed from the caller's view")
	assert.EqualError(t, res.Cause(), "read tcp: connection reset by peer", "the raw error is the cause")
	assert.Equal(t, []toolctx.Content{&toolctx.Text{Text: "the tool call timed out after 5ms"}}, res.Content, "the content is the public message only")

	// So is a nil result returned late.
	res = middleware.Timeout(5*time.Millisecond)(toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		<-ctx.Done()
		return nil
	})).CallTool(context.Background(), newReq("slow"))
	assert.Equal(t, errs.CodeTimeout, res.Error.Code, "a late nil result is a timeout")
	assert.True(t, res.Scrubbed(), "a late nil result is scrubbed")
	assert.ErrorIs(t, res.Cause(), toolctx.ErrNilResult, "the cause says the handler returned nil")

	// A panic stays a panic, deadline or not.
	res = mustThen(t, middleware.New(middleware.Timeout(5*time.Millisecond), middleware.Recover), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		<-ctx.Done()
		panic("late bug")
	})).CallTool(context.Background(), newReq("slow"))
	var pe *errs.PanicError
	require.ErrorAs(t, res.Cause(), &pe, "a late panic passes through")
	assert.Equal(t, "late bug", pe.Value, "the panic's value")
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, Scrubbed: true},
		toolctx.Classify(context.Background(), res, errs.Normalizer{}), "an internal failure, not a timeout")

	// A handler that ignores ctx and succeeds late still gets the timeout.
	late := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		time.Sleep(20 * time.Millisecond)
		return toolctx.TextResult("late")
	})
	res = middleware.Timeout(5*time.Millisecond)(late).CallTool(context.Background(), newReq("slow"))
	assert.True(t, res.IsError, "a late success is replaced by the timeout")
	assert.Equal(t, errs.CodeTimeout, errs.CodeOf(res.Cause()), "timeout code")
	assert.ErrorIs(t, res.Cause(), context.DeadlineExceeded, "the cause is the deadline")

	// Fast calls pass through.
	ok := toolctx.TextResult("fast")
	assert.Same(t, ok, middleware.Timeout(time.Second)(handlerReturning(ok)).CallTool(context.Background(), newReq("t")), "a fast call is unchanged")

	// The caller's own cancellation is left alone.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	res = middleware.Timeout(time.Hour)(waitDone).CallTool(ctx, newReq("t"))
	assert.ErrorIs(t, res.Cause(), context.Canceled, "the caller's cancellation reaches the handler's result unchanged")
	assert.NotEqual(t, errs.CodeTimeout, errs.CodeOf(res.Cause()), "not turned into a timeout")

	// The caller's own earlier deadline is left to the caller.
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer dcancel()
	res = middleware.Timeout(time.Hour)(waitDone).CallTool(dctx, newReq("t"))
	var e *errs.Error
	assert.False(t, errors.As(res.Cause(), &e), "the caller's deadline is not replaced by Timeout's public error")
	assert.ErrorIs(t, res.Cause(), context.DeadlineExceeded, "the handler's own result")

	// The handler sees the deadline.
	var deadline time.Time
	var hasDeadline bool
	middleware.Timeout(time.Minute)(toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		deadline, hasDeadline = ctx.Deadline()
		return ok
	})).CallTool(context.Background(), newReq("t"))
	assert.True(t, hasDeadline, "the handler's context has a deadline")
	assert.WithinDuration(t, time.Now().Add(time.Minute), deadline, 5*time.Second, "the deadline is d from entry")

	assert.Panics(t, func() { middleware.Timeout(0) }, "a zero duration panics at construction")
	assert.Panics(t, func() { middleware.Timeout(-time.Second) }, "a negative duration panics at construction")
}

// stackOf is the stack of the panic an event reports, or nil.
func stackOf(ev middleware.DiagnosticEvent) []byte {
	if pe := errs.PanicOf(ev.Cause()); pe != nil {
		return pe.Stack
	}
	return nil
}
