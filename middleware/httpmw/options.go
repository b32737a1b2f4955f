package httpmw

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// RecoverOption configures [Recover]. Only the options that apply to it
// have this type: giving Recover one of Authenticate's does not compile.
type RecoverOption interface {
	applyToRecover(*options)
}

// AuthenticateOption configures [Authenticate]. [WithRealm] and
// [WithFailureStatus] are AuthenticateOptions only.
type AuthenticateOption interface {
	applyToAuthenticate(*options)
}

// Option configures both [Recover] and [Authenticate]: where the raw cause
// of a failure goes ([WithDiagnostics], [WithFallbackLogger]).
type Option interface {
	RecoverOption
	AuthenticateOption
}

// sharedOption is an [Option].
type sharedOption func(*options)

func (f sharedOption) applyToRecover(o *options)      { f(o) }
func (f sharedOption) applyToAuthenticate(o *options) { f(o) }

// authOption is an [AuthenticateOption] only.
type authOption func(*options)

func (f authOption) applyToAuthenticate(o *options) { f(o) }

type options struct {
	diag       middleware.DiagnosticsFunc
	fallback   *slog.Logger
	realm      string
	failStatus int

	mistake string // the first option given a value it cannot use
}

func (o *options) fail(msg string) {
	if o.mistake == "" {
		o.mistake = msg
	}
}

func defaultOptions() options {
	return options{realm: "mcp", failStatus: http.StatusServiceUnavailable}
}

// check panics, naming ctor, when an option was given a value it cannot
// use (see package middleware's doc on construction mistakes).
func (o *options) check(ctor string) {
	if o.mistake != "" {
		panic("httpmw." + ctor + ": " + o.mistake)
	}
}

func recoverOptions(opts []RecoverOption) options {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil { // a nil option asks for nothing
			opt.applyToRecover(&o)
		}
	}
	o.check("Recover")
	return o
}

func authenticateOptions(opts []AuthenticateOption) options {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil {
			opt.applyToAuthenticate(&o)
		}
	}
	o.check("Authenticate")
	return o
}

// WithDiagnostics sets the hook that receives the raw cause of an
// unexpected failure, as a [middleware.DiagnosticEvent] with a zero Details
// (no tool call is involved): a panic for Recover, a verifier's unexpected
// error for Authenticate. Expected rejections are never reported. Without
// it, the cause is logged to the fallback logger instead, so it is never
// lost. A nil fn is a construction mistake: leave the option out.
func WithDiagnostics(fn middleware.DiagnosticsFunc) Option {
	return sharedOption(func(o *options) {
		if fn == nil {
			o.fail("WithDiagnostics(nil): pass a hook, or leave the option out to log the cause to the fallback logger")
			return
		}
		o.diag = fn
	})
}

// WithFallbackLogger sets where a cause goes when there is no diagnostics
// hook, and where a panic of the hook itself is reported. Default:
// slog.Default() at the time of the report. A nil l is a construction
// mistake: leave the option out for the default.
func WithFallbackLogger(l *slog.Logger) Option {
	return sharedOption(func(o *options) {
		if l == nil {
			o.fail("WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()")
			return
		}
		o.fallback = l
	})
}

// WithRealm sets the realm of Authenticate's WWW-Authenticate challenge.
// Default "mcp". An empty realm is a construction mistake.
func WithRealm(realm string) AuthenticateOption {
	return authOption(func(o *options) {
		if realm == "" {
			o.fail(`WithRealm(""): pass a realm, or leave the option out for "mcp"`)
			return
		}
		o.realm = realm
	})
}

// WithFailureStatus sets the status of an unexpected verifier failure:
// http.StatusServiceUnavailable (the default: the client may retry, and
// does not discard a good token) or http.StatusUnauthorized (for clients
// that only understand 401; some will then ask the user to log in again).
// Any other status is a construction mistake: Authenticate panics naming
// it.
func WithFailureStatus(status int) AuthenticateOption {
	return authOption(func(o *options) {
		if status != http.StatusServiceUnavailable && status != http.StatusUnauthorized {
			o.fail("WithFailureStatus(" + strconv.Itoa(status) + "): the status must be 503 or 401")
			return
		}
		o.failStatus = status
	})
}

// report sends a failure outside any tool call to the diagnostics hook, or,
// without one, to the fallback logger. A panic of the hook is caught and
// logged; it never changes the response.
func (o *options) report(ctx context.Context, msg string, code errs.Code, cause error) {
	if o.diag == nil {
		l := o.fallback
		if l == nil {
			l = slog.Default()
		}
		l.ErrorContext(ctx, msg, "err", errs.Describe(cause), "code", code)
		return
	}
	safecall.Reporter{Logger: o.fallback, Describe: errs.Describe}.Call(ctx, "toolmw: diagnostics hook panicked", func() {
		o.diag(ctx, middleware.NewDiagnosticEvent(toolctx.Details{}, code, cause))
	}, nil)
}
