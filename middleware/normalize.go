package middleware

import (
	"context"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Normalize fills the public envelope of every failed result from its raw
// cause under n, as [toolctx.Normalized] describes: an [*errs.Error] keeps
// its public fields, n.Map maps the user's own errors, context errors become
// canceled or timeout, anything else gets n's generic message. The raw
// cause stays in the result for the interceptors outside. Successful results
// pass through untouched, at no cost.
//
//	middleware.Normalize(errs.Normalizer{}) // the default rules
//	middleware.Normalize(errs.Normalizer{Map: func(err error) *errs.Error {
//		if errors.Is(err, sql.ErrNoRows) {
//			return errs.NotFound("no such record")
//		}
//		return nil
//	}})
//
// Adapters normalize whatever reaches them with the default rules anyway;
// put Normalize in the chain to apply a mapping or a generic message of
// your own, and so that interceptors outside it see the public envelope.
func Normalize(n errs.Normalizer) toolctx.Middleware {
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			res := next.CallTool(ctx, req)
			if !res.Failed() {
				return res // the common case, without a call
			}
			return toolctx.Normalized(ctx, res, n)
		})
	}
}
