package middleware

import (
	"context"
	"errors"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/ctxend"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// DiagnosticEvent describes one unexpected failure, for the operator. Its
// cause is the raw error: send it to logs, traces or an error tracker, never
// to the client.
type DiagnosticEvent struct {
	// Details identifies the call; it is the zero Details (IsZero) for a
	// failure outside any tool call (in the HTTP transport or the auth
	// layer).
	Details toolctx.Details
	// Code is the code the client was given.
	Code errs.Code

	cause error
}

// NewDiagnosticEvent returns the event of a failure with the given raw
// cause: for code that reports failures of its own to a [DiagnosticsFunc]
// (an HTTP layer, a test of a hook).
func NewDiagnosticEvent(details toolctx.Details, code errs.Code, cause error) DiagnosticEvent {
	return DiagnosticEvent{Details: details, Code: code, cause: cause}
}

// Cause returns the raw error: a handler's error, or an [*errs.PanicError]
// for a panic, whose value and stack [errs.PanicOf] reaches:
//
//	if pe := errs.PanicOf(ev.Cause()); pe != nil {
//		report(pe.Value, pe.Stack)
//	}
//
// It is the same accessor as [CallInfo.Cause].
func (ev DiagnosticEvent) Cause() error { return ev.cause }

// DiagnosticsFunc receives diagnostic events. It is called synchronously,
// once per unexpected failure, before the result goes back to the client:
// keep it fast.
type DiagnosticsFunc func(ctx context.Context, ev DiagnosticEvent)

// Diagnostics calls fn once for each unexpected failure of a call: a raw
// error the client only saw a generic message for, or a panic (with its
// stack). It is not called for successes, invalid arguments, explicit
// public errors, a handler's own isError results, expected rejections, or
// anything after the client cancelled the call.
//
// A panic that passes through Diagnostics (from an interceptor between it
// and Recover, or with no Recover inside it) is reported once, as an
// [*errs.PanicError] with its stack, and continues outward with its value;
// so is a runtime.Goexit, reported with the cause
// errs.NewPanicError([errs.ErrGoexit]), which then continues (nothing can
// stop a Goexit).
//
// A result the adapter cannot send is reported, and replaced, as [After]
// describes ([adapter.Sendable]).
//
// A panic in fn is caught and reported once to the fallback logger
// ([WithFallbackLogger]); the result is returned unchanged either way.
//
// Place it outside [Recover], so it sees panics as failures. It classifies
// results with the same rules as [Normalize]; pass [WithNormalizer] when the
// chain's Normalize has a mapping and is not inside Diagnostics. A nil fn
// is a construction mistake: Diagnostics panics (see the package doc).
func Diagnostics(fn DiagnosticsFunc, opts ...Option) toolctx.Middleware {
	if fn == nil {
		panic("middleware.Diagnostics: the hook is nil")
	}
	o := newOptions("Diagnostics", opts)
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
			// A panic or a Goexit is reported and goes on (see After).
			var s safecall.Scope
			defer s.Observe(func(f safecall.Fault) {
				if !canceled(ctx) {
					o.report(ctx, fn, NewDiagnosticEvent(toolctx.DetailsOf(req), errs.CodeInternal, panicError(f)))
				}
			})
			res = adapter.Sendable(ctx, next.CallTool(ctx, req))
			s.Returned()
			if !res.Failed() {
				return res
			}
			out := toolctx.Classify(ctx, res, o.normalizer)
			// A scrubbed failure shown as canceled or timeout is a raw
			// error after the call's context ended: an expected end, not a
			// diagnostic (its raw message goes to the audit row).
			if !out.Scrubbed || out.Public.Code != errs.CodeInternal || canceled(ctx) {
				return res
			}
			o.report(ctx, fn, NewDiagnosticEvent(toolctx.DetailsOf(req), out.Public.Code, res.Cause()))
			return res
		})
	}
}

// canceled reports whether the call's context was cancelled (by the
// client): nothing is reported after that.
func canceled(ctx context.Context) bool {
	return errors.Is(ctxend.Err(ctx), context.Canceled)
}

// report calls fn, catching and logging its panic (or Goexit).
func (o *options) report(ctx context.Context, fn DiagnosticsFunc, ev DiagnosticEvent) {
	o.callHook(ctx, "toolmw: diagnostics hook panicked", ev.Details, func() { fn(ctx, ev) })
}
