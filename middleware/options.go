package middleware

import (
	"log/slog"

	"github.com/toolmw/toolmw/errs"
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
