package middleware

import (
	"context"
	"net/http"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// HTTPRecover returns HTTP middleware that recovers a panic in the handlers
// it wraps (the MCP transport, authentication, anything outside a tool
// call) and answers it with a generic 500: a JSON-RPC error object with a
// null id, code -32603 and a fixed message. The panic value never reaches
// the client and the connection is not dropped.
//
// The raw panic goes to fn as a [DiagnosticEvent] whose cause is an
// [*errs.PanicError] (value and stack), with a zero Details: no tool call
// is involved. A panic in fn is caught and reported to the
// fallback logger ([WithFallbackLogger]); a nil fn reports nothing.
//
// When the wrapped handler had already written the response header (a
// streaming response, say) the status can no longer change: the response
// ends where it was, and the client sees a truncated stream, not a panic
// value. [http.ErrAbortHandler] is re-panicked, as net/http expects, to
// abort the response.
//
// Place it outermost:
//
//	alice.New(middleware.HTTPRecover(diag), middleware.RequestID, auth, middleware.MaxBodyBytes(1<<20)).Then(mcpHandler)
func HTTPRecover(fn DiagnosticsFunc, opts ...Option) func(http.Handler) http.Handler {
	o := newOptions(opts)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hw := &httpWriter{ResponseWriter: w}
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if v == http.ErrAbortHandler { //nolint:errorlint // net/http compares the same way
					panic(v)
				}
				pe := errs.NewPanicError(v)
				if fn != nil {
					o.report(r.Context(), fn, NewDiagnosticEvent(toolctx.Details{}, errs.CodeInternal, pe))
				}
				if hw.wroteHeader {
					return
				}
				writeJSONError(w, http.StatusInternalServerError, errs.JSONRPCInternalError, httpInternalMessage)
			}()
			next.ServeHTTP(hw, r)
		})
	}
}

// httpInternalMessage is what a client is told of a failure in the HTTP
// layer.
const httpInternalMessage = "internal error: the request failed; the cause was recorded on the server"

// reportHTTP sends a failure outside any tool call to fn.
func (o *options) reportHTTP(ctx context.Context, fn DiagnosticsFunc, err error, code errs.Code) {
	if fn == nil {
		return
	}
	o.report(ctx, fn, NewDiagnosticEvent(toolctx.Details{}, code, err))
}
