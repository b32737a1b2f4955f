package middleware

import (
	"context"
	"log/slog"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Option configures the hook interceptors, [Diagnostics] and [After].
type Option func(*options)

type options struct {
	normalizer errs.Normalizer
	fallback   *slog.Logger
}

func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// logger returns the fallback logger: the one set with WithFallbackLogger,
// or slog.Default() at the time of the report.
func (o *options) logger() *slog.Logger {
	if o.fallback != nil {
		return o.fallback
	}
	return slog.Default()
}

// WithNormalizer sets the rules used to classify a result that was not
// normalized yet (when [Normalize] is not inside the interceptor). Use the
// same normalizer as the chain's Normalize. Default: errs.Normalizer{}.
func WithNormalizer(n errs.Normalizer) Option {
	return func(o *options) { o.normalizer = n }
}

// WithFallbackLogger sets where a hook's own panic is reported. Default:
// slog.Default().
func WithFallbackLogger(l *slog.Logger) Option {
	return func(o *options) { o.fallback = l }
}

// hookFault reports a hook that panicked with v, or called runtime.Goexit
// (v nil), to the fallback logger, with the call's details when there is a
// call. The value is rendered with [errs.Describe], which never panics,
// whatever its methods do.
func (o *options) hookFault(ctx context.Context, msg string, v any, call toolctx.Details) {
	attrs := make([]any, 0, 4)
	if v == nil {
		attrs = append(attrs, "panic", "runtime.Goexit")
	} else {
		attrs = append(attrs, "panic", errs.Describe(v))
	}
	if !call.IsZero() {
		attrs = append(attrs, "call", call)
	}
	o.logger().ErrorContext(ctx, msg, attrs...)
}
