package httpmw

import (
	"errors"
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
//     down, or a nil *errs.Error returned as a non-nil error): a generic
//     503 with Retry-After (or 401, with [WithFailureStatus]) whose body
//     says nothing of the cause; the raw error goes to the
//     [WithDiagnostics] hook with a zero Details.
//
// Every answer of Authenticate reaches the row of an audit.HTTP outside it
// with its code and public message, and a success its identity, with no
// help from the user. A panic in verify is not recovered here: put
// [Recover] outside.
//
// Options: [WithDiagnostics], [WithFallbackLogger], [WithRealm],
// [WithFailureStatus].
func Authenticate(verify VerifyFunc, opts ...AuthenticateOption) func(http.Handler) http.Handler {
	if verify == nil {
		panic("httpmw.Authenticate: verify must not be nil")
	}
	o := authenticateOptions(opts)
	challenge := `Bearer realm="` + strings.ReplaceAll(o.realm, `"`, "") + `"`
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := verify(r)
			if err == nil {
				reportIdentity(r.Context(), &id)
				next.ServeHTTP(w, r.WithContext(toolctx.WithIdentity(r.Context(), id)))
				return
			}
			var e *errs.Error
			if errors.As(err, &e) && e != nil {
				switch pub := e.Public(); pub.Code {
				case errs.CodeUnauthenticated:
					w.Header().Set("WWW-Authenticate", challenge)
					writeJSONError(w, r, http.StatusUnauthorized, pub.Code, errs.JSONRPCUnauthenticated, pub.Message)
					return
				case errs.CodePermissionDenied:
					w.Header().Set("WWW-Authenticate", challenge+`, error="insufficient_scope"`)
					writeJSONError(w, r, http.StatusForbidden, pub.Code, errs.JSONRPCPermissionDenied, pub.Message)
					return
				}
			}
			o.report(r.Context(), "toolmw: the verifier failed", errs.CodeUnavailable, err)
			if o.failStatus == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", challenge)
				writeJSONError(w, r, http.StatusUnauthorized, errs.CodeUnavailable, errs.JSONRPCUnauthenticated, authUnavailableMessage)
				return
			}
			w.Header().Set("Retry-After", "5")
			writeJSONError(w, r, http.StatusServiceUnavailable, errs.CodeUnavailable, errs.JSONRPCUnavailable, authUnavailableMessage)
		})
	}
}

// authUnavailableMessage is what a client is told when the verifier failed
// unexpectedly.
const authUnavailableMessage = "authentication is unavailable: retry later"
