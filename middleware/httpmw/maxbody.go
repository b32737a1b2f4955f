package httpmw

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/httpwrap"
)

// MaxBodyBytes returns HTTP middleware that limits request bodies to n
// bytes, with [http.MaxBytesReader].
//
// A request whose Content-Length exceeds n is answered at once with 413
// Request Entity Too Large, without calling the next handler. A body that
// turns out larger while the next handler reads it (chunked, or a lying
// Content-Length) makes the read fail; when the next handler then writes its
// error response, its status is replaced by 413 (the streamable HTTP
// transport answers with a JSON-RPC parse error naming the limit, in a 413
// response). If the next handler wrote its header before reading too much,
// the status stays as written. n must be positive: MaxBodyBytes panics at
// construction otherwise.
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
			lb := &limitedBody{}
			hw, _ := httpwrap.Wrap(w, func(code int) int {
				if lb.exceeded {
					return http.StatusRequestEntityTooLarge
				}
				return code
			})
			lb.rc = http.MaxBytesReader(hw, r.Body, n)
			r2 := r.WithContext(r.Context()) // a shallow copy
			r2.Body = lb
			next.ServeHTTP(hw, r2)
		})
	}
}

// limitedBody records that the limit was hit.
type limitedBody struct {
	rc       io.ReadCloser
	exceeded bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	var mbe *http.MaxBytesError
	if err != nil && errors.As(err, &mbe) {
		b.exceeded = true
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
