package httpmw

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"github.com/toolmw/toolmw/errs"
)

// The fixed messages of a request body that could not be read. The read
// error itself is never sent: its text names socket addresses ("read tcp
// 10.0.0.5:8080->203.0.113.9:51515: i/o timeout"), which go-sdk's
// streamable HTTP handler would write to the client as they are.
const (
	msgBodyTimeout    = "the request body did not arrive in time"
	msgBodyUnreadable = "the request body could not be read"
)

// readBody reads r's body, at most n bytes, before the next handler sees
// it, and returns it; when the read fails it answers r itself and returns
// false:
//   - a body over n bytes (chunked, or a Content-Length that lies): 413,
//     naming the limit;
//   - a body that did not arrive before the server's read deadline
//     (http.Server.ReadTimeout): 408 Request Timeout;
//   - any other failure (the client broke off mid-body, the connection was
//     reset, a body reader failed): 400 Bad Request.
//
// Each answer is a JSON-RPC error with a fixed message and closes the
// connection, whose state is unknown after a failed read.
func readBody(w http.ResponseWriter, r *http.Request, n int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, n))
	if err == nil {
		return body, true
	}
	w.Header().Set("Connection", "close")
	var (
		mbe *http.MaxBytesError
		ne  net.Error
	)
	switch {
	case errors.As(err, &mbe):
		writeJSONError(w, r, http.StatusRequestEntityTooLarge, errs.CodeInvalidRequest, errs.JSONRPCInvalidRequest,
			fmt.Sprintf("request body too large: the limit is %d bytes", n))
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		writeJSONError(w, r, http.StatusRequestTimeout, errs.CodeInvalidRequest, errs.JSONRPCInvalidRequest, msgBodyTimeout)
	default:
		writeJSONError(w, r, http.StatusBadRequest, errs.CodeInvalidRequest, errs.JSONRPCInvalidRequest, msgBodyUnreadable)
	}
	return nil, false
}

// bufferedBody is a body read in full, for the next handler.
type bufferedBody struct{ *bytes.Reader }

func (bufferedBody) Close() error { return nil }
