package serve

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadlines lifts the write deadline from a GET stream: a message written
// after the server's WriteTimeout still reaches the client.
func TestDeadlinesLiftGETStream(t *testing.T) {
	stream := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(rw)
		_, _ = io.WriteString(rw, "first\n")
		_ = rc.Flush()
		select {
		case <-time.After(1500 * time.Millisecond): // past WriteTimeout
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(rw, "late\n")
		_ = rc.Flush()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: deadlines(time.Minute)(stream), WriteTimeout: 500 * time.Millisecond}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + ln.Addr().String() + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	assert.Equal(t, "first\nlate\n", string(got), "the message after WriteTimeout reached the client")
}
