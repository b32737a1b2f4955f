package middleware

import (
	"context"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// CallInfo is what an [After] hook learns of a finished call.
type CallInfo struct {
	// Details identifies the call.
	Details toolctx.Details
	// Start is when the call entered the interceptor.
	Start time.Time
	// Duration is how long the rest of the chain and the handler took.
	Duration time.Duration
	// Outcome is how the call ended, as the caller sees it.
	Outcome toolctx.Outcome

	cause error
	notes []toolctx.Note
}

// Cause returns the raw error of a failed call, or nil. It is for the
// server side only.
func (c CallInfo) Cause() error { return c.cause }

// Notes returns the notes that interceptors attached to the call's final
// result ([toolctx.CallResult.WithNote]), oldest first: attempts, a cache
// hit, a scrub, a truncation. The slice is shared: do not change it.
func (c CallInfo) Notes() []toolctx.Note { return c.notes }

// AfterFunc is a hook run after each call.
type AfterFunc func(ctx context.Context, info CallInfo)

// epoch is the process's clock origin: timing a call takes two monotonic
// clock reads from it, cheaper than reading the wall clock each time. Start
// times are epoch plus the monotonic offset, so they do not follow a step
// of the wall clock made while the process runs.
var epoch = time.Now()

// After calls fn after every call that passes through it, with the call's
// details, timing and outcome: the primitive that audit is built on. A call
// that panics through After (no [Recover] inside it) is reported as a
// failure whose cause is the [*errs.PanicError], and the panic continues
// outward. A call whose goroutine calls runtime.Goexit inside After (what
// t.FailNow does in a test helper) is reported the same way, with the cause
// errs.NewPanicError([errs.ErrGoexit]), and the Goexit continues: nothing,
// not even Recover, can stop a Goexit; the adapters run the chain on a
// goroutine of their own and answer such a call with the generic internal
// failure.
//
// fn runs synchronously before the result goes back to the client: hand
// slow work to a queue. A panic in fn is caught and reported once to the
// fallback logger ([WithFallbackLogger]); the result is returned unchanged.
// Use [WithNormalizer] when Normalize with a mapping is not inside After.
//
// On a successful call After costs two monotonic clock reads and no
// allocation.
func After(fn AfterFunc, opts ...Option) toolctx.Middleware {
	o := newOptions(opts)
	return func(next toolctx.Handler) toolctx.Handler {
		if fn == nil {
			return next
		}
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
			since := time.Since(epoch)
			const (
				inNext = iota
				inHook
				done
			)
			stage := inNext
			defer func() {
				if stage == done {
					return
				}
				// recover returns nil only for runtime.Goexit: panic(nil)
				// is a *runtime.PanicNilError since Go 1.21.
				v := recover()
				if stage == inHook {
					o.hookFault(ctx, "toolmw: after hook panicked", v, toolctx.DetailsOf(req))
					return
				}
				o.reportPanic(ctx, fn, req, since, panicError(v, v == nil))
				if v != nil {
					panic(v)
				}
				// A Goexit: returning lets it continue.
			}()
			res = next.CallTool(ctx, req)
			info := CallInfo{Details: toolctx.DetailsOf(req), Start: epoch.Add(since), Duration: time.Since(epoch) - since, notes: res.Notes()}
			if res == nil || res.IsError {
				info.Outcome = toolctx.Classify(ctx, res, o.normalizer)
				info.cause = res.Cause()
			}
			stage = inHook
			fn(ctx, info)
			stage = done
			return res
		})
	}
}

// reportPanic tells fn about a call that panicked (or called
// runtime.Goexit) through After.
func (o *options) reportPanic(ctx context.Context, fn AfterFunc, req *toolctx.Request, since time.Duration, pe *errs.PanicError) {
	res := toolctx.ErrorResult(pe)
	info := CallInfo{
		Details:  toolctx.DetailsOf(req),
		Start:    epoch.Add(since),
		Duration: time.Since(epoch) - since,
		Outcome:  toolctx.Classify(ctx, res, o.normalizer),
		cause:    res.Cause(),
	}
	finished := false
	defer func() {
		if !finished {
			o.hookFault(ctx, "toolmw: after hook panicked", recover(), info.Details)
		}
	}()
	fn(ctx, info)
	finished = true
}
