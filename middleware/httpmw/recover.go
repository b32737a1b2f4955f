package httpmw

import (
	"net/http"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/httpwrap"
	"github.com/toolmw/toolmw/internal/safecall"
)

// Recover returns HTTP middleware that recovers a panic in the handlers it
// wraps (the MCP transport, authentication, anything outside a tool call)
// and answers it with a generic 500: a JSON-RPC error object with a null
// id, code [errs.JSONRPCInternalError] and a fixed message. The panic value
// never reaches the client and the connection is not dropped.
//
// The raw panic goes to the [WithDiagnostics] hook as a
// [middleware.DiagnosticEvent] whose cause is an [*errs.PanicError] (value
// and stack), with a zero Details: no tool call is involved. Without a
// hook it is logged to the fallback logger ([WithFallbackLogger]).
//
// When the wrapped handler had already written the response header (a
// streaming response, say) the status can no longer change: the response
// ends where it was, and the client sees a truncated stream, not a panic
// value. [http.ErrAbortHandler] is re-panicked, as net/http expects, to
// abort the response.
//
// Place it outermost:
//
//	alice.New(httpmw.Recover(httpmw.WithDiagnostics(diag)), httpmw.RequestID, auth, httpmw.MaxBodyBytes(1<<20)).Then(mcpHandler)
//
// Options: [WithDiagnostics], [WithFallbackLogger].
func Recover(opts ...RecoverOption) func(http.Handler) http.Handler {
	o := recoverOptions(opts)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hw, st := httpwrap.Wrap(w, nil)
			safecall.Call(func() { next.ServeHTTP(hw, r) }, func(f safecall.Fault) {
				if f.Goexit {
					// It cannot be stopped, and the response cannot be
					// finished: the client sees the connection end.
					o.report(r.Context(), "toolmw: runtime.Goexit in the HTTP layer", errs.CodeInternal, errs.NewPanicError(errs.ErrGoexit))
					return
				}
				if f.Value == http.ErrAbortHandler { //nolint:errorlint // net/http compares the same way
					panic(f.Value)
				}
				o.report(r.Context(), "toolmw: panic in the HTTP layer", errs.CodeInternal, errs.NewPanicError(f.Value))
				if st.Wrote() {
					return
				}
				writeJSONError(w, r, http.StatusInternalServerError, errs.CodeInternal, errs.JSONRPCInternalError, httpInternalMessage)
			})
		})
	}
}

// httpInternalMessage is what a client is told of a failure in the HTTP
// layer.
const httpInternalMessage = "internal error: the request failed; the cause was recorded on the server"
