package httpmw

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"

	"github.com/toolmw/toolmw/toolctx"
)

// RequestIDHeader is the header [RequestID] reads and sets.
const RequestIDHeader = "X-Request-Id"

// MaxRequestIDLen is the longest request id [RequestID] accepts from a
// client.
const MaxRequestIDLen = 128

// RequestID is HTTP middleware that gives each request an id: the client's
// X-Request-Id when it is well-formed (1 to [MaxRequestIDLen] bytes of
// A-Z a-z 0-9 and - _ . : ), otherwise a new random one. It sets the id on
// the response's X-Request-Id header and in the request's context with
// [toolctx.WithRequestID], where the adapters read it into
// [toolctx.Request.RequestID] (and so the audit row and diagnostics); an
// audit.HTTP outside it gets the id for its row too.
//
// A malformed client id is replaced, not echoed: the header is reflected
// into logs and responses, so it must not carry arbitrary bytes.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		reportRequestID(r.Context(), id) // for audit.HTTP's row
		next.ServeHTTP(w, r.WithContext(toolctx.WithRequestID(r.Context(), id)))
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// newRequestID returns 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	return hex.EncodeToString(b[:])
}
