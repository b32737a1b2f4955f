package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Timeout gives each call a deadline d from when it enters the interceptor.
// When the deadline passes before the handler returns, the client gets a
// public [errs.CodeTimeout] result, whatever the handler returned late,
// except a panic, which stays an internal failure (it is a bug whenever it
// happens, and Diagnostics reports it). A deadline of the caller's own (an
// earlier one, or a cancellation) is left to the caller.
//
// What the audit row records of a late result follows the usual rule: a
// raw error (a "read tcp: connection reset by peer", say) was scrubbed
// from the caller's view, so the row holds its message; a late success, a
// public error or an error that wraps ctx's error leaves the row the
// timeout's public message. Either way the row's outcome is timeout, and
// Diagnostics is not called.
//
// Place it inside Recover, next to the handlers it bounds (with [When] for
// some tools only). The handler runs in the caller's goroutine and must
// honour ctx: Timeout does not abandon a handler that ignores it. A
// non-positive d panics, at construction.
func Timeout(d time.Duration) toolctx.Middleware {
	if d <= 0 {
		panic(fmt.Sprintf("middleware.Timeout: the duration must be positive, got %v", d))
	}
	timeout := errs.Timeout(fmt.Sprintf("the tool call timed out after %v", d))
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			tctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			res := next.CallTool(tctx, req)
			if ctx.Err() != nil || !errors.Is(tctx.Err(), context.DeadlineExceeded) {
				return res
			}
			return timedOut(ctx, res, timeout)
		})
	}
}

// timedOut is the result of a call whose handler returned res after
// Timeout's deadline: timeout, scrubbed when res was a raw failure.
func timedOut(ctx context.Context, res *toolctx.CallResult, timeout *errs.Error) *toolctx.CallResult {
	if res == nil || res.IsError {
		cause := res.Cause()
		if panicOf(cause) != nil {
			return res
		}
		if toolctx.Classify(ctx, res, errs.Normalizer{}).Scrubbed {
			return toolctx.ScrubbedResult(timeout.Public(), cause)
		}
		if cause != nil {
			return toolctx.ErrorResult(timeout.WithCause(cause))
		}
	}
	return toolctx.ErrorResult(timeout.WithCause(context.DeadlineExceeded))
}
