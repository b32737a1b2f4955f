package audit

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// httpSlot carries what inner layers learned (request id, identity, the
// curated error) back out to [HTTP].
type httpSlot struct {
	requestID string
	identity  *toolctx.Identity
	pub       *errs.Public
}

type httpSlotKey struct{}

// HTTP returns an HTTP middleware (func(http.Handler) http.Handler,
// composable with github.com/justinas/alice) that emits one [KindHTTP] row
// per request to e: method, path (without the query), status, duration,
// outcome and code from the status, the request id
// ([toolctx.RequestIDFrom]) and the caller's subject
// ([toolctx.IdentityFrom]).
//
// Place it outside the authentication layer, so that rejected requests get
// a row too, and inside the request-id layer. The request id and identity
// are read from the request's context when HTTP is entered; layers inside
// it that set them are seen when [CaptureHTTP] wraps the innermost handler:
//
//	alice.New(requestID, audit.HTTP(w), auth).Then(audit.CaptureHTTP(mcpHandler))
//
// The row's message is what the error handling curated and passed to
// [NoteHTTPError]; without it, the status text. It is never a raw error.
func HTTP(e Emitter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if e == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			slot := &httpSlot{requestID: toolctx.RequestIDFrom(r.Context()), identity: toolctx.IdentityFrom(r.Context())}
			ctx := context.WithValue(r.Context(), httpSlotKey{}, slot)
			sw := &statusWriter{ResponseWriter: w}
			defer func() {
				v := recover()
				status := sw.status
				if v != nil && !sw.wrote {
					status = http.StatusInternalServerError
				}
				if status == 0 {
					status = http.StatusOK
				}
				if v == nil && errors.Is(r.Context().Err(), context.Canceled) && !sw.wrote {
					status = 499 // client closed the request
				}
				rec := Record{
					Time: start, Kind: KindHTTP, RequestID: slot.requestID,
					Method: r.Method, Path: r.URL.Path, Status: status,
					Duration: time.Since(start),
				}
				if slot.identity != nil {
					rec.Subject = slot.identity.Subject
				}
				rec.Code, rec.Outcome = httpCode(status)
				if rec.Outcome != OutcomeOK {
					rec.Message = http.StatusText(status)
					if slot.pub != nil {
						rec.Code, rec.Message, rec.Detail = slot.pub.Code, slot.pub.Message, slot.pub.Detail
					}
				}
				e.Emit(ctx, rec)
				if v != nil {
					panic(v)
				}
			}()
			next.ServeHTTP(sw, r.WithContext(ctx))
		})
	}
}

// CaptureHTTP passes the request id and identity that layers between [HTTP]
// and it set on the request's context back to HTTP's row. Wrap the
// innermost handler with it. Without an HTTP outside it does nothing.
func CaptureHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slot, ok := r.Context().Value(httpSlotKey{}).(*httpSlot); ok {
			if id := toolctx.RequestIDFrom(r.Context()); id != "" {
				slot.requestID = id
			}
			if id := toolctx.IdentityFrom(r.Context()); id != nil {
				slot.identity = id
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
	if slot, ok := ctx.Value(httpSlotKey{}).(*httpSlot); ok {
		slot.pub = &pub
	}
}

// statusWriter records the status; it keeps Flush (for SSE streams) and
// exposes the writer it wraps to http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

// WriteHeader records the first final status.
func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status = code
		if code >= 200 { // 1xx are informational; the real status follows
			w.wrote = true
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200.
func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		if w.status == 0 || w.status < 200 {
			w.status = http.StatusOK
		}
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes the wrapped writer when it can.
func (w *statusWriter) Flush() {
	if !w.wrote {
		w.wrote, w.status = true, http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hijacks the wrapped writer when it can.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
