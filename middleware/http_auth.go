package middleware

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// VerifyFunc authenticates an HTTP request: it returns the caller's
// identity (subject and scopes, never the credential), or an error.
//
// An expected rejection is an [*errs.Error] (anywhere in the error's chain)
// with [errs.CodeUnauthenticated] (no or bad credentials) or
// [errs.CodePermissionDenied] (valid credentials that may not use this
// server); [ErrNoCredentials] is one. Any other error is an unexpected
// failure of the verifier itself, such as the identity provider being down.
type VerifyFunc func(r *http.Request) (toolctx.Identity, error)

// ErrNoCredentials is the expected rejection for a request that carries no
// credentials. Verifiers may return it (or any errs.Unauthenticated error).
var ErrNoCredentials = errs.Unauthenticated("authentication required")

// AuthOption configures [Authenticate].
type AuthOption func(*authOptions)

type authOptions struct {
	diag        DiagnosticsFunc
	realm       string
	failStatus  int
	fallbackLog *slog.Logger
}

// AuthDiagnostics sets the hook that receives the raw error of an
// unexpected verifier failure, with a zero Details (no tool call is
// involved). Expected rejections are never reported.
func AuthDiagnostics(fn DiagnosticsFunc) AuthOption {
	return func(o *authOptions) { o.diag = fn }
}

// AuthRealm sets the realm of the WWW-Authenticate challenge. Default "mcp".
func AuthRealm(realm string) AuthOption {
	return func(o *authOptions) { o.realm = realm }
}

// AuthFailureStatus sets the status of an unexpected verifier failure:
// http.StatusServiceUnavailable (the default: the client may retry, and
// does not discard a good token) or http.StatusUnauthorized (for clients
// that only understand 401; some will then ask the user to log in again).
// Other values are ignored.
func AuthFailureStatus(status int) AuthOption {
	return func(o *authOptions) {
		if status == http.StatusServiceUnavailable || status == http.StatusUnauthorized {
			o.failStatus = status
		}
	}
}

// AuthFallbackLogger sets where a panic of the diagnostics hook is
// reported. Default: slog.Default().
func AuthFallbackLogger(l *slog.Logger) AuthOption {
	return func(o *authOptions) { o.fallbackLog = l }
}

// Authenticate returns HTTP middleware that authenticates every request with
// verify before the next handler (the MCP transport) sees it.
//
//   - Success: the identity goes into the request's context with
//     [toolctx.WithIdentity]; the adapters copy it into
//     [toolctx.Request.Identity], so interceptors, diagnostics details and
//     audit rows name the subject and scopes. The credential is not copied
//     anywhere by toolmw (the Request's Header still holds it for the
//     handler; it never enters Details).
//   - Expected rejection (see [VerifyFunc]): 401 Unauthorized with a
//     WWW-Authenticate: Bearer challenge for CodeUnauthenticated, 403
//     Forbidden with error="insufficient_scope" for CodePermissionDenied;
//     the body holds the error's public message only. No diagnostics.
//   - Unexpected failure (any other error, the identity provider being
//     down): a generic 503 with Retry-After (or 401, with
//     [AuthFailureStatus]) whose body says nothing of the cause; the raw
//     error goes to the [AuthDiagnostics] hook with a zero Details.
//
// A panic in verify is not recovered here: put [HTTPRecover] outside.
func Authenticate(verify VerifyFunc, opts ...AuthOption) func(http.Handler) http.Handler {
	if verify == nil {
		panic("middleware.Authenticate: verify must not be nil")
	}
	ao := authOptions{realm: "mcp", failStatus: http.StatusServiceUnavailable}
	for _, opt := range opts {
		if opt != nil {
			opt(&ao)
		}
	}
	o := options{fallback: ao.fallbackLog}
	challenge := `Bearer realm="` + strings.ReplaceAll(ao.realm, `"`, "") + `"`
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := verify(r)
			if err == nil {
				next.ServeHTTP(w, r.WithContext(toolctx.WithIdentity(r.Context(), id)))
				return
			}
			var e *errs.Error
			if errors.As(err, &e) && e != nil {
				switch pub := e.Public(); pub.Code {
				case errs.CodeUnauthenticated:
					w.Header().Set("WWW-Authenticate", challenge)
					writeJSONError(w, http.StatusUnauthorized, -32001, pub.Message)
					return
				case errs.CodePermissionDenied:
					w.Header().Set("WWW-Authenticate", challenge+`, error="insufficient_scope"`)
					writeJSONError(w, http.StatusForbidden, -32003, pub.Message)
					return
				}
			}
			o.reportHTTP(r.Context(), ao.diag, err, errs.CodeUnavailable)
			if ao.failStatus == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", challenge)
				writeJSONError(w, http.StatusUnauthorized, -32001, authUnavailableMessage)
				return
			}
			w.Header().Set("Retry-After", "5")
			writeJSONError(w, http.StatusServiceUnavailable, -32002, authUnavailableMessage)
		})
	}
}

// authUnavailableMessage is what a client is told when the verifier failed
// unexpectedly.
const authUnavailableMessage = "authentication is unavailable: retry later"
