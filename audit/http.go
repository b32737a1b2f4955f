package audit

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
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
			req := &httpRequest{report: httpmw.Report{RequestID: toolctx.RequestIDFrom(r.Context()), Identity: toolctx.IdentityFrom(r.Context())}}
			slot := &req.report
			ctx := context.WithValue(httpmw.WithReport(r.Context(), slot), httpRequestKey{}, req)
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

// httpRequest is what [HTTP] keeps of one request: the Report the layers
// inside fill, and whether a row emitted on the request's context (its tool
// call's) already waited for the disk under [DurabilityDisk]. The request's
// own row then does not wait: it is emitted once the handler returns, after
// the SDK sent the answer (go-sdk flushes it before), so its wait would
// protect no answer, and it would cost each call a second sync in a row
// (BenchmarkDurability: disk/memory 0.72-0.76 with it, 0.83-0.84 without).
// It reaches the disk with the next group commit, at the latest
// FlushInterval later.
type httpRequest struct {
	report httpmw.Report
	synced atomic.Bool // set by the writer's goroutine of a call, read by the request's
}

type httpRequestKey struct{}

// afterSyncedRow reports whether r is an HTTP row whose request already had
// a row made durable (see httpRequest).
func afterSyncedRow(ctx context.Context, r *Record) bool {
	if r.Kind != KindHTTP {
		return false
	}
	req, _ := ctx.Value(httpRequestKey{}).(*httpRequest)
	return req != nil && req.synced.Load()
}

// synced notes, on the request ctx belongs to, that r (not its HTTP row)
// waited for the disk.
func synced(ctx context.Context, r *Record) {
	if r.Kind == KindHTTP {
		return
	}
	if req, _ := ctx.Value(httpRequestKey{}).(*httpRequest); req != nil {
		req.synced.Store(true)
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
