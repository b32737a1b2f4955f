package middleware

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// CallInfo is what an [After] hook learns of a finished call: the one
// options object it receives, so a new field is never a breaking change.
type CallInfo struct {
	// Details identifies the call: the read-only view of Request without
	// arguments, headers or credentials.
	Details toolctx.Details
	// Request is the call's request. It is read-only: a hook must not
	// change it. It holds the arguments and, on HTTP, the headers
	// (credentials included): record them only through a redactor.
	Request *toolctx.Request
	// Result is the final result the chain inside returned, as the
	// interceptors outside and the adapter receive it; nil when the
	// handler returned nil, or when the call panicked (or called
	// runtime.Goexit) through After. It is read-only: a hook must not
	// change it. Its raw cause is [CallInfo.Cause].
	Result *toolctx.CallResult
	// Start is the wall-clock time the call entered the interceptor, with
	// its monotonic reading, so an audit row lines up with every other log.
	// It is read as the monotonic time since a time.Now() taken at most a
	// second before (see [After]): a step of the system clock (set by hand,
	// or by an NTP step) shows in Start within a second.
	Start time.Time
	// Duration is how long the rest of the chain and the handler took.
	Duration time.Duration
	// Outcome is how the call ended, as the caller sees it.
	Outcome toolctx.Outcome

	cause error
}

// Cause returns the raw error of a failed call (for a panic, the
// [*errs.PanicError]; see [errs.PanicOf]), or nil. It is for the server side
// only. [DiagnosticEvent.Cause] is the same accessor.
func (c CallInfo) Cause() error { return c.cause }

// AfterFunc is a hook run after each call.
type AfterFunc func(ctx context.Context, info CallInfo)

// After calls fn after every call that passes through it, with the call's
// details, timing and outcome: the primitive that audit is built on. A call
// that panics through After (no [Recover] inside it) is reported as a
// failure whose cause is the [*errs.PanicError], and the panic continues
// outward. A call whose goroutine calls runtime.Goexit inside After (what
// t.FailNow does in a test helper) is reported the same way, with the cause
// errs.NewPanicError([errs.ErrGoexit]), and the Goexit continues: nothing,
// not even Recover, can stop a Goexit; the adapters run the chain contained
// (on a coroutine of its own, which a Goexit ends instead of the SDK's
// goroutine) and answer such a call with the generic internal failure.
//
// fn runs synchronously before the result goes back to the client: hand
// slow work to a queue. A panic in fn is caught and reported once to the
// fallback logger ([WithFallbackLogger]); the result is returned unchanged.
// Use [WithNormalizer] when Normalize with a mapping is not inside After.
//
// A result the adapter running the call reports it cannot send (an
// interceptor's result that does not encode, see [adapter.Sendable]) is
// replaced, for fn and for the interceptors outside, by the raw failure
// that says why: fn records the internal failure the client gets, with the
// encoder's error as the cause.
//
// On a successful call After costs two monotonic clock reads (on a
// virtual machine about 30 ns each) and no allocation: Start is the
// monotonic time since a wall-clock reading After takes again once it is a
// second old, not a time.Now() of its own, which would read both clocks. A
// nil fn is a construction mistake: After panics (see the package doc).
func After(fn AfterFunc, opts ...Option) toolctx.Middleware {
	if fn == nil {
		panic("middleware.After: the hook is nil")
	}
	o := newOptions("After", opts)
	return func(next toolctx.Handler) toolctx.Handler {
		var clock wallClock
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
			start := clock.now()
			// One deferred call guards both stages (a Scope adds no frame
			// to the stack of a panic below): a panic or a Goexit of the
			// rest of the chain is reported to fn and goes on, stopping it
			// is Recover's or the adapter's; fn's own is stopped and
			// reported to the fallback logger.
			var s safecall.Scope
			inHook := false
			defer s.Handle(func(f safecall.Fault) (stop bool) {
				if inHook {
					o.hookFault(ctx, afterHookFault, f, toolctx.DetailsOf(req))
					return true
				}
				o.reportPanic(ctx, fn, req, start, panicError(f))
				return false
			})
			// What the adapter cannot send is recorded as the failure the
			// client gets (adapter.Sendable), not as a success.
			res = adapter.Sendable(ctx, next.CallTool(ctx, req))
			info := CallInfo{Details: toolctx.DetailsOf(req), Request: req, Result: res, Start: start, Duration: time.Since(start)}
			if res.Failed() {
				info.Outcome = toolctx.Classify(ctx, res, o.normalizer)
				info.cause = res.Cause()
			} else if res.InputRequired != nil {
				info.Outcome.InputRequired = true
			}
			inHook = true
			fn(ctx, info)
			s.Returned()
			return res
		})
	}
}

// wallClock tells the time with one monotonic clock read: time.Now reads
// the wall clock and the monotonic clock, two paravirtual clock reads on a
// virtual machine (about 70 ns together where one costs 30). It is an
// anchor (a time.Now()) plus the monotonic time since; the anchor is taken
// again once it is a second old, so a step of the system clock shows
// within a second, and the slew NTP applies moves both clocks alike.
type wallClock struct{ anchor atomic.Pointer[time.Time] }

// now is time.Now(), wall and monotonic readings, as wallClock reads it.
// It allocates once a second, to store the new anchor.
func (c *wallClock) now() time.Time {
	if a := c.anchor.Load(); a != nil {
		if d := time.Since(*a); d < time.Second {
			return a.Add(d) // both readings advance by d: the monotonic one is exact
		}
	}
	t := time.Now()
	c.anchor.Store(&t)
	return t
}

// afterHookFault is what the fallback logger is told of an After hook
// that panicked.
const afterHookFault = "toolmw: after hook panicked"

// reportPanic tells fn about a call that panicked (or called
// runtime.Goexit) through After.
func (o *options) reportPanic(ctx context.Context, fn AfterFunc, req *toolctx.Request, start time.Time, pe *errs.PanicError) {
	info := CallInfo{
		Details:  toolctx.DetailsOf(req),
		Request:  req,
		Start:    start,
		Duration: time.Since(start),
		Outcome:  toolctx.Classify(ctx, toolctx.ErrorResult(pe), o.normalizer),
		cause:    pe,
	}
	o.callHook(ctx, afterHookFault, info.Details, func() { fn(ctx, info) })
}
