package httpwrap_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/internal/httpwrap"
)

// hijackable is a ResponseWriter that can be hijacked.
type hijackable struct {
	*httptest.ResponseRecorder
	hijacked bool
}

func (h *hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.hijacked = true
	return nil, nil, nil
}

// readerFrom is a ResponseWriter with ReadFrom, as net/http's own is.
type readerFrom struct{ *httptest.ResponseRecorder }

func (r readerFrom) ReadFrom(src io.Reader) (int64, error) { return io.Copy(r.ResponseRecorder, src) }

func TestWrapKeepsExactlyTheOptionalInterfaces(t *testing.T) {
	rec := httptest.NewRecorder() // a Flusher, not a Hijacker
	w, _ := httpwrap.Wrap(rec, nil)
	_, isHijacker := w.(http.Hijacker)
	assert.False(t, isHijacker, "no Hijack where the wrapped writer has none")
	_, isFlusher := w.(http.Flusher)
	assert.True(t, isFlusher, "Flush where the wrapped writer has it")
	_, _, err := http.NewResponseController(w).Hijack()
	assert.ErrorIs(t, err, http.ErrNotSupported, "http.ResponseController finds no Hijack either")
	u, ok := w.(interface{ Unwrap() http.ResponseWriter })
	require.True(t, ok, "Unwrap, for http.ResponseController")
	assert.Same(t, rec, u.Unwrap(), "Unwrap returns the wrapped writer")

	hj := &hijackable{ResponseRecorder: httptest.NewRecorder()}
	w, _ = httpwrap.Wrap(hj, nil)
	h, ok := w.(http.Hijacker)
	require.True(t, ok, "Hijack where the wrapped writer has it")
	_, _, _ = h.Hijack()
	assert.True(t, hj.hijacked, "Hijack reaches the wrapped writer")
}

func TestWrapRecordsAndRewritesTheStatus(t *testing.T) {
	for name, write := range map[string]func(http.ResponseWriter){
		"WriteHeader": func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot) },
		"Write":       func(w http.ResponseWriter) { _, _ = w.Write([]byte("x")) },
		"Flush":       func(w http.ResponseWriter) { w.(http.Flusher).Flush() },
		"ReadFrom":    func(w http.ResponseWriter) { _, _ = w.(io.ReaderFrom).ReadFrom(strings.NewReader("x")) },
	} {
		t.Run(name, func(t *testing.T) {
			w, st := httpwrap.Wrap(readerFrom{httptest.NewRecorder()}, nil)
			assert.False(t, st.Wrote(), "nothing written yet")
			w.WriteHeader(http.StatusContinue) // informational: not the status
			assert.False(t, st.Wrote(), "a 1xx is not the final status")
			write(w)
			want := http.StatusOK
			if name == "WriteHeader" {
				want = http.StatusTeapot
			}
			assert.True(t, st.Wrote(), "the final status was written")
			assert.Equal(t, want, st.Code(), "the status recorded")
			w.WriteHeader(http.StatusInternalServerError) // superfluous: ignored
			assert.Equal(t, want, st.Code(), "only the first final status counts")
		})
	}

	rec := httptest.NewRecorder()
	w, st := httpwrap.Wrap(rec, func(code int) int { return http.StatusRequestEntityTooLarge })
	_, _ = w.Write([]byte("body"))
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "the rewrite applies to an implicit 200")
	assert.Equal(t, http.StatusRequestEntityTooLarge, st.Code(), "and is what is recorded")
}
