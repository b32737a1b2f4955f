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
// public [errs.CodeTimeout] result, whatever the handler returned late; a
// deadline of the caller's own (an earlier one, or a cancellation) is left
// to the caller.
//
// The handler runs in the caller's goroutine and must honour ctx: Timeout
// does not abandon a handler that ignores it. A non-positive d panics, at
// construction.
func Timeout(d time.Duration) toolctx.Middleware {
	if d <= 0 {
		panic(fmt.Sprintf("middleware.Timeout: the duration must be positive, got %v", d))
	}
	msg := fmt.Sprintf("the tool call timed out after %v", d)
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			tctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			res := next.CallTool(tctx, req)
			if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
				cause := context.DeadlineExceeded
				if c := res.Cause(); res != nil && c != nil {
					cause = c
				}
				return toolctx.ErrorResult(errs.Timeout(msg).WithCause(cause))
			}
			return res
		})
	}
}
