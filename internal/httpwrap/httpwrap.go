package httpwrap

import (
	"io"
	"net/http"

	"github.com/felixge/httpsnoop"
)

// Status is what a wrapped writer has seen.
type Status struct {
	code    int
	wrote   bool
	rewrite func(code int) int
}

// Wrote reports whether the final (non-1xx) header was written.
func (s *Status) Wrote() bool { return s.wrote }

// Code returns the final status written, or 0 while none was.
func (s *Status) Code() int { return s.code }

// Wrap returns a writer over w that records the status into the returned
// Status. rewrite, when not nil, may replace the final status of the first
// WriteHeader (or the implicit 200 of the first Write, Flush or ReadFrom).
func Wrap(w http.ResponseWriter, rewrite func(code int) int) (http.ResponseWriter, *Status) {
	s := &Status{rewrite: rewrite}
	header := func(code int) {
		if !s.wrote && code >= 200 {
			s.wrote = true
			if s.rewrite != nil {
				code = s.rewrite(code)
			}
			s.code = code
		}
		w.WriteHeader(code)
	}
	implicit := func() {
		if !s.wrote {
			header(http.StatusOK)
		}
	}
	return httpsnoop.Wrap(w, httpsnoop.Hooks{
		WriteHeader: func(httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc { return header },
		Write: func(next httpsnoop.WriteFunc) httpsnoop.WriteFunc {
			return func(b []byte) (int, error) {
				implicit()
				return next(b)
			}
		},
		Flush: func(next httpsnoop.FlushFunc) httpsnoop.FlushFunc {
			return func() {
				implicit()
				next()
			}
		},
		ReadFrom: func(next httpsnoop.ReadFromFunc) httpsnoop.ReadFromFunc {
			return func(src io.Reader) (int64, error) {
				implicit()
				return next(src)
			}
		},
	}), s
}
