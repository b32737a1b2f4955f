package httpmw

import (
	"context"
	"log/slog"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// Option configures [Recover] and [Authenticate]. Each option says which of
// them it applies to; giving one to the other is a construction mistake,
// and the constructor panics naming it.
type Option struct {
	name  string
	auth  bool // applies to Authenticate only
	apply func(*options)
}

type options struct {
	diag       middleware.DiagnosticsFunc
	fallback   *slog.Logger
	realm      string
	failStatus int
}

func newOptions(ctor string, forAuth bool, opts []Option) options {
	o := options{realm: "mcp", failStatus: 503}
	for _, opt := range opts {
		if opt.apply == nil {
			continue
		}
		if opt.auth && !forAuth {
			panic("httpmw." + ctor + ": " + opt.name + " applies to Authenticate only")
		}
		opt.apply(&o)
	}
	return o
}

// WithDiagnostics sets the hook that receives the raw cause of an
// unexpected failure, as a [middleware.DiagnosticEvent] with a zero Details
// (no tool call is involved): a panic for Recover, a verifier's unexpected
// error for Authenticate. Expected rejections are never reported. Without
// it, the cause is logged to the fallback logger instead, so it is never
// lost. Applies to Recover and Authenticate.
func WithDiagnostics(fn middleware.DiagnosticsFunc) Option {
	return Option{name: "WithDiagnostics", apply: func(o *options) { o.diag = fn }}
}

// WithFallbackLogger sets where a cause goes when there is no diagnostics
// hook, and where a panic of the hook itself is reported. Default:
// slog.Default(). Applies to Recover and Authenticate.
func WithFallbackLogger(l *slog.Logger) Option {
	return Option{name: "WithFallbackLogger", apply: func(o *options) { o.fallback = l }}
}

// WithRealm sets the realm of Authenticate's WWW-Authenticate challenge.
// Default "mcp". Applies to Authenticate only.
func WithRealm(realm string) Option {
	return Option{name: "WithRealm", auth: true, apply: func(o *options) { o.realm = realm }}
}

// WithFailureStatus sets the status of an unexpected verifier failure:
// http.StatusServiceUnavailable (the default: the client may retry, and
// does not discard a good token) or http.StatusUnauthorized (for clients
// that only understand 401; some will then ask the user to log in again).
// Any other status panics at construction. Applies to Authenticate only.
func WithFailureStatus(status int) Option {
	if status != 503 && status != 401 {
		panic("httpmw.WithFailureStatus: the status must be 503 or 401")
	}
	return Option{name: "WithFailureStatus", auth: true, apply: func(o *options) { o.failStatus = status }}
}

func (o *options) logger() *slog.Logger {
	if o.fallback != nil {
		return o.fallback
	}
	return slog.Default()
}

// report sends a failure outside any tool call to the diagnostics hook, or,
// without one, to the fallback logger. A panic of the hook is caught and
// logged; it never changes the response.
func (o *options) report(ctx context.Context, msg string, code errs.Code, cause error) {
	if o.diag == nil {
		o.logger().ErrorContext(ctx, msg, "err", errs.Describe(cause), "code", code)
		return
	}
	safecall.Reporter{Logger: o.fallback, Describe: errs.Describe}.Call(ctx, "toolmw: diagnostics hook panicked", func() {
		o.diag(ctx, middleware.NewDiagnosticEvent(toolctx.Details{}, code, cause))
	}, nil)
}
