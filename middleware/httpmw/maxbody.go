package httpmw

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/toolmw/toolmw/errs"
)

// MaxBodyBytes returns HTTP middleware that limits request bodies to n
// bytes and reads them before the next handler does.
//
// A request whose Content-Length exceeds n is answered at once with 413
// Request Entity Too Large, without calling the next handler. Any other
// body is read in full first (the SDKs' handlers read it in full anyway),
// so that a read that fails is answered here with a fixed message and
// never by the next handler, which would send the read error's text
// (go-sdk's streamable HTTP handler does: "failed to read body: read tcp
// 127.0.0.1:8080->...: i/o timeout", socket addresses included): a body
// that turns out larger than n (chunked, or a lying Content-Length) is 413,
// one that did not arrive before the server's read deadline is 408 Request
// Timeout, and one that broke off is 400 Bad Request; the next handler is
// not called. The next handler reads the body from memory. n must be
// positive: MaxBodyBytes panics at construction otherwise.
func MaxBodyBytes(n int64) func(http.Handler) http.Handler {
	if n <= 0 {
		panic(fmt.Sprintf("httpmw.MaxBodyBytes: the limit must be positive, got %d", n))
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > n {
				w.Header().Set("Connection", "close")
				writeJSONError(w, r, http.StatusRequestEntityTooLarge, errs.CodeInvalidRequest, errs.JSONRPCInvalidRequest,
					fmt.Sprintf("request body too large: the limit is %d bytes", n))
				return
			}
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			body, ok := readBody(w, r, n)
			if !ok {
				return
			}
			r2 := r.WithContext(r.Context()) // a shallow copy
			r2.Body = bufferedBody{bytes.NewReader(body)}
			next.ServeHTTP(w, r2)
		})
	}
}
