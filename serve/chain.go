package serve

import (
	"context"
	"log/slog"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
)

// Diagnostics is the operator's view of unexpected failures: the raw
// error, the call's details and, for a panic, the stack, logged at error
// level to logger as "tool call failed". logger is required.
func Diagnostics(logger *slog.Logger) middleware.DiagnosticsFunc {
	if logger == nil {
		panic("serve.Diagnostics: the logger is nil")
	}
	return func(ctx context.Context, ev middleware.DiagnosticEvent) {
		attrs := []any{"code", ev.Code, "err", errs.Describe(ev.Cause())}
		if !ev.Details.IsZero() {
			attrs = append(attrs, "call", ev.Details)
		}
		if pe := errs.PanicOf(ev.Cause()); pe != nil {
			attrs = append(attrs, "stack", string(pe.Stack))
		}
		logger.ErrorContext(ctx, "tool call failed", attrs...)
	}
}

// Chain is the recommended chain, outermost first: the audit row (w) sees
// everything, panics, timeouts and guards included; diag gets the raw
// causes; Normalize fills the public envelope; Recover turns panics into
// failures. A row w cannot take goes to fallback. Append the guards and
// the deadlines to it, so that their rejections are audited and
// normalized like any failure. All three are required: a nil one panics,
// as the interceptors they go to do.
func Chain(w audit.Emitter, diag middleware.DiagnosticsFunc, fallback *slog.Logger) middleware.Chain {
	if fallback == nil {
		panic("serve.Chain: the fallback logger is nil")
	}
	return middleware.New(
		audit.Interceptor(w, audit.WithFallbackLogger(fallback)),
		middleware.Diagnostics(diag),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
}
