package audit

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/httpwrap"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
)

// HTTP returns an HTTP middleware (func(http.Handler) http.Handler,
// composable with github.com/justinas/alice) that emits one [KindHTTP] row
// per request to e: method, path (without the query), status, duration,
// outcome and code from the status, the request id
// ([toolctx.RequestIDFrom]) and the caller's subject
// ([toolctx.IdentityFrom]).
//
// Place it outside the authentication layer, so that rejected requests get
// a row too. The request id and identity are read from the request's context
// when HTTP is entered; the layers of package middleware/httpmw inside it
// (RequestID, Authenticate) hand theirs to the row themselves, as they hand
// it the code and public message of every error they answer with:
//
//	alice.New(httpmw.Recover(), audit.HTTP(w), httpmw.RequestID, httpmw.Authenticate(verify)).Then(mcpHandler)
//
// A layer of your own inside HTTP that sets the request id or identity is
// seen when [CaptureHTTP] wraps the innermost handler, and one that answers
// with an error of its own passes its public code and message with
// [NoteHTTPError]. Without either, the row's message is the status text. It
// is never a raw error.
//
// A nil e is a construction mistake: HTTP panics (see package middleware's
// doc, "Knobs"); leave the layer out to write no HTTP rows.
func HTTP(e Emitter) func(http.Handler) http.Handler {
	if e == nil {
		panic("audit.HTTP: the emitter is nil")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			slot := &httpmw.Report{RequestID: toolctx.RequestIDFrom(r.Context()), Identity: toolctx.IdentityFrom(r.Context())}
			ctx := httpmw.WithReport(r.Context(), slot)
			sw, st := httpwrap.Wrap(w, nil)
			row := func(faulted bool) {
				status := st.Code()
				if faulted && !st.Wrote() {
					status = http.StatusInternalServerError
				}
				if status == 0 {
					status = http.StatusOK
				}
				if !faulted && errors.Is(r.Context().Err(), context.Canceled) && !st.Wrote() {
					status = 499 // client closed the request
				}
				rec := Record{
					Time: start, Kind: KindHTTP, RequestID: slot.RequestID,
					Method: r.Method, Path: r.URL.Path, Status: status,
					Duration: time.Since(start),
				}
				if slot.Identity != nil {
					rec.Subject = slot.Identity.Subject
				}
				rec.Code, rec.Outcome = httpCode(status)
				if rec.Outcome != OutcomeOK {
					rec.Message = http.StatusText(status)
				}
				if slot.Public != nil {
					// A layer answered with a public error: its code, even
					// in a 200 (httpmw.CheckFrames answers a refused
					// request's frame with its JSON-RPC error).
					rec.Code, rec.Message, rec.Detail = slot.Public.Code, slot.Public.Message, slot.Public.Detail
					if rec.Outcome == OutcomeOK {
						rec.Outcome = OutcomeRejected
					}
				}
				emitSafely(ctx, nil, e, &rec)
			}
			// A panic (or a Goexit) gets its row, as a 500 when nothing
			// was written, and goes on to a recoverer outside.
			safecall.Observe(func() { next.ServeHTTP(sw, r.WithContext(ctx)) }, func(safecall.Fault) { row(true) })
			row(false)
		})
	}
}

// CaptureHTTP passes the request id and identity that layers between [HTTP]
// and it set on the request's context back to HTTP's row. Wrap the
// innermost handler with it. Without an HTTP outside it does nothing.
func CaptureHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rep := httpmw.ReportFrom(r.Context()); rep != nil {
			if id := toolctx.RequestIDFrom(r.Context()); id != "" {
				rep.RequestID = id
			}
			if id := toolctx.IdentityFrom(r.Context()); id != nil {
				rep.Identity = id
			}
		}
		next.ServeHTTP(w, r)
	})
}

// NoteHTTPError records the public error an HTTP layer answered with (a
// generic auth failure, say), for the HTTP row's code and message. pub must
// be public: it is what the client was told. Without an [HTTP] outside it
// does nothing.
func NoteHTTPError(ctx context.Context, pub errs.Public) {
	if rep := httpmw.ReportFrom(ctx); rep != nil {
		rep.Public = &pub
	}
}
