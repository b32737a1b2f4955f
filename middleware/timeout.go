package middleware

import (
	"context"
	"fmt"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/errchain"
	"github.com/toolmw/toolmw/toolctx"
)

// Timeout gives each call a deadline d from when it enters the interceptor.
// When the deadline passes before the handler returns, the client gets a
// public [errs.CodeTimeout] result, whatever the handler returned late,
// except a panic, which stays an internal failure (it is a bug whenever it
// happens, and Diagnostics reports it). A deadline of the caller's own (an
// earlier one, or a cancellation) is left to the caller. Whether the
// deadline passed is read from the clock when the handler returns, not from
// the context's Err, which a timer that runs late on a loaded machine sets
// late.
//
// What the audit row records of a late result follows the usual rule: a
// raw error (a "read tcp: connection reset by peer", say) was scrubbed
// from the caller's view, so the row holds its message; a late success or
// an error that wraps ctx's error leaves the row the timeout's public
// message. A handler's own public failure (an [*errs.Error], or its own
// isError result) returned after the deadline is replaced by the timeout
// for the caller, but not lost from the record: the row's message names
// both, as "the tool call timed out after 2s; after the deadline the
// handler returned not_found: no such invoice". Either way the row's
// outcome is timeout, and Diagnostics is not called. The notes of the late
// result (what a guard inside Timeout noted on it, see
// [toolctx.CallResult.WithNote]) are kept on the timeout's result, so they
// reach the audit row.
//
// Place it inside Recover, next to the handlers it bounds (with [When] for
// some tools only). The handler runs in the caller's goroutine and must
// honour ctx: Timeout does not abandon a handler that ignores it. A
// non-positive d panics, at construction.
func Timeout(d time.Duration) toolctx.Middleware { return timeout(d, time.Now) }

// timeout is Timeout with the clock it reads (tests stand in a clock that
// runs ahead of the context's timer).
func timeout(d time.Duration, now func() time.Time) toolctx.Middleware {
	if d <= 0 {
		panic(fmt.Sprintf("middleware.Timeout: the duration must be positive, got %v", d))
	}
	public := errs.Timeout(fmt.Sprintf("the tool call timed out after %v", d))
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			deadline := now().Add(d)
			tctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			res := next.CallTool(tctx, req)
			if ctx.Err() != nil {
				return res // the caller cancelled, or its own deadline passed
			}
			if own, ok := ctx.Deadline(); ok && !own.After(deadline) {
				return res // the caller's deadline, no later than ours, governs
			}
			if now().Before(deadline) {
				return res
			}
			return withNotesOf(timedOut(tctx, res, public), res)
		})
	}
}

// timedOut is the result of a call whose handler returned res after
// Timeout's deadline; tctx is the context the handler had, which has ended.
func timedOut(tctx context.Context, res *toolctx.CallResult, timeout *errs.Error) *toolctx.CallResult {
	if !res.Failed() {
		return toolctx.ErrorResult(timeout.WithCause(context.DeadlineExceeded))
	}
	cause := res.Cause()
	if errs.PanicOf(cause) != nil {
		return res
	}
	o := toolctx.Classify(tctx, res, errs.Normalizer{})
	switch {
	case o.Scrubbed:
		// A raw failure (or a nil result): the row keeps its raw message.
		return toolctx.ScrubbedResult(timeout.Public(), cause)
	case deadlineOnly(cause):
		// The deadline's own error, as the handler saw it.
		return toolctx.ErrorResult(timeout.WithCause(cause))
	}
	// The handler's own public failure, which the caller is not shown:
	// the row names it next to the timeout.
	return toolctx.ScrubbedResult(timeout.Public(), &lateFailure{timeout: timeout.Error(), late: o.Public})
}

// withNotesOf returns out, which replaces res, carrying res's notes, so that
// what a guard inside Timeout noted (a retry's attempts, a cache hit)
// reaches the audit row of a call that timed out. out is res itself when
// Timeout kept it.
func withNotesOf(out, res *toolctx.CallResult) *toolctx.CallResult {
	if out == res {
		return out
	}
	for _, n := range res.Notes() {
		out = out.WithNote(n.Key, n.Value)
	}
	return out
}

// deadlineOnly reports whether err is a context error and nothing public:
// the deadline itself, as the handler returned it.
func deadlineOnly(err error) bool {
	if err == nil {
		return false
	}
	if _, public := errchain.As[*errs.Error](err); public {
		return false
	}
	return errchain.Is(err, context.DeadlineExceeded) || errchain.Is(err, context.Canceled)
}

// lateFailure is the cause of Timeout's result when the handler returned a
// public failure of its own after the deadline: its text, which the audit
// row records, names the timeout and the handler's public failure (never
// that failure's private cause: a public error's row holds its public
// message).
type lateFailure struct {
	timeout string      // Timeout's public message
	late    errs.Public // what the handler would have told the caller
}

func (e *lateFailure) Error() string {
	return e.timeout + "; after the deadline the handler returned " + string(e.late.Code) + ": " + e.late.Message
}

// Unwrap gives the deadline, so errors.Is(cause, context.DeadlineExceeded)
// holds, as for any other call that timed out.
func (e *lateFailure) Unwrap() error { return context.DeadlineExceeded }
