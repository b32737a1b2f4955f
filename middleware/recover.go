package middleware

import (
	"context"

	"github.com/toolmw/toolmw/internal/safecall"

	"github.com/toolmw/toolmw/toolctx"
)

// Recover turns a panic in next into a failed result whose cause is an
// [*errs.PanicError] holding the panic value and the stack, so the server
// keeps running and the interceptors outside see an ordinary failure: the
// client gets a generic message, diagnostics get the value and the stack,
// the audit row gets the value.
//
// Place it innermost, right around the handler, so that audit and
// diagnostics are outside it.
//
// Recover cannot stop a runtime.Goexit (what t.FailNow does in a test
// helper): no deferred function can. [After] and [Diagnostics] report a
// Goexit that passes through them; the adapters run the chain contained
// (on a coroutine of its own, which a Goexit ends instead of the SDK's
// goroutine) and answer such a call with the generic internal failure.
func Recover(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
		var s safecall.Scope // no frame of its own on the panic's stack
		defer s.Stop(func(f safecall.Fault) {
			if !f.Goexit { // a Goexit goes on whatever Recover does
				res = toolctx.ErrorResult(panicError(f))
			}
		})
		res = next.CallTool(ctx, req)
		s.Returned()
		return res
	})
}
