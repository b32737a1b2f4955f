package middleware

import (
	"context"
	"log/slog"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/toolctx"
)

// Option configures the hook interceptors, [Diagnostics] and [After].
type Option func(*options)

type options struct {
	normalizer errs.Normalizer
	fallback   *slog.Logger

	mistake string // the first option given a value it cannot use
}

// newOptions applies opts, skipping a nil one, and panics naming ctor when
// an option was given a value it cannot use (see the package doc, "Knobs").
func newOptions(ctor string, opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.mistake != "" {
		panic("middleware." + ctor + ": " + o.mistake)
	}
	return o
}

// WithNormalizer sets the rules used to classify a result that was not
// normalized yet (when [Normalize] is not inside the interceptor). Use the
// same normalizer as the chain's Normalize. Default: errs.Normalizer{}.
func WithNormalizer(n errs.Normalizer) Option {
	return func(o *options) { o.normalizer = n }
}

// WithFallbackLogger sets where a hook's own panic is reported. Default:
// slog.Default() at the time of the report. A nil l is a construction
// mistake: leave the option out for the default.
func WithFallbackLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l == nil {
			if o.mistake == "" {
				o.mistake = "WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()"
			}
			return
		}
		o.fallback = l
	}
}

// callHook calls f, a hook, so that a panic in it (or a runtime.Goexit) is
// reported once to the fallback logger as msg, with the call's details
// when there is a call, and goes no further; the value is rendered with
// [errs.Describe], which never panics, whatever its methods do.
func (o *options) callHook(ctx context.Context, msg string, call toolctx.Details, f func()) {
	var s safecall.Scope // the deferred form: fewer calls on every call's path
	defer s.Stop(func(fault safecall.Fault) { o.hookFault(ctx, msg, fault, call) })
	f()
	s.Returned()
}

// hookFault reports a hook's fault once to the fallback logger.
func (o *options) hookFault(ctx context.Context, msg string, fault safecall.Fault, call toolctx.Details) {
	r := safecall.Reporter{Logger: o.fallback, Describe: errs.Describe}
	if call.IsZero() {
		r.Report(ctx, msg, fault)
		return
	}
	r.Report(ctx, msg, fault, slog.Any("call", call))
}
