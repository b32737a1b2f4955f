package main

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// deadlines fits the http.Server's WriteTimeout to MCP's requests.
//
// net/http starts the write deadline when a request's headers have been
// read, so a POST whose body took a while to arrive (within ReadTimeout)
// would have less than WriteTimeout left for its tool call and answer, and a
// call within its own deadline could be cut off. Once a POST's body has been
// read, its write deadline restarts: the server then has writeTimeout to
// answer, which -write-timeout's check keeps longer than the slow tool's
// deadline. (ReadTimeout needs no such care: net/http lifts the read
// deadline once the body is in.)
//
// A GET is a stateful session's standalone SSE stream, which lasts as long
// as the session: the write deadline would fail the first message the server
// sends on it after WriteTimeout, so it is lifted. The stream ends when its
// client goes away (the connection closes) or when the session ends (closed
// by the client, expired by -session-idle-timeout, or at shutdown).
func deadlines(writeTimeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(rw)
			if r.Method == http.MethodGet {
				// An error means the writer cannot set deadlines (it is
				// not a net/http connection's): then none was set either.
				_ = rc.SetWriteDeadline(time.Time{})
			} else if r.Body != nil && r.Body != http.NoBody {
				r.Body = &bodyRead{ReadCloser: r.Body, done: func() {
					_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
				}}
			}
			next.ServeHTTP(rw, r)
		})
	}
}

// bodyRead calls done once, when the body has been read to its end.
type bodyRead struct {
	io.ReadCloser
	done func()
}

func (b *bodyRead) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && b.done != nil {
		b.done()
		b.done = nil
	}
	return n, err
}
