package toolmwtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeKit is a Kit whose Dial serves nothing but an HTTP handler on the
// Wire and records what is stopped, in order.
func fakeKit(stopped *[]string, dialErr error) Kit[struct{}, string] {
	return Kit[struct{}, string]{
		Name: "fake",
		Dial: func(_ context.Context, _ struct{}, tr Transport, w *Wire) (Client[string], error) {
			w.OnClose(func() { *stopped = append(*stopped, "first") })
			url, hc := w.HTTP(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(rw, "served") }))
			w.OnClose(func() { *stopped = append(*stopped, "second") })
			if dialErr != nil {
				return Client[string]{}, dialErr
			}
			return Client[string]{
				ListTools: func(ctx context.Context) ([]Tool, error) {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
					resp, err := hc.Do(req)
					if err != nil {
						return nil, err
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					return []Tool{{Name: "t"}}, resp.Body.Close()
				},
				CallTool: func(context.Context, string, map[string]any) (string, error) { return "text", nil },
				Close:    func() { *stopped = append(*stopped, "client") },
			}, nil
		},
		Answer: func(r string) Answer { return Answer{Text: r} },
	}
}

// TestConnectBuildsTheConn: the Kit's Conn records what Wire.HTTP's
// client received (through the run's wrap), reads results with Answer,
// probes with tools/list, and closes the client before Dial's stops, in
// the order they were registered.
func TestConnectBuildsTheConn(t *testing.T) {
	var stopped []string
	wrapped := false
	wrap := func(h http.Handler) http.Handler { wrapped = true; return h }
	conn, err := fakeKit(&stopped, nil).connect(context.Background(), struct{}{}, wrap, InMemory)
	require.NoError(t, err)
	assert.True(t, wrapped, "Wire.HTTP serves the handler wrapped")
	assert.Equal(t, InMemory.String(), conn.Transport, "an empty Client.Transport is the transport's name")
	require.NoError(t, conn.Alive(context.Background()), "the probe lists the tools")
	assert.True(t, strings.Contains(string(conn.Received.Since(0)), "HTTP 200\nserved"), "the HTTP client records: %q", conn.Received.Since(0))
	a, err := conn.CallTool(context.Background(), "t", nil)
	require.NoError(t, err)
	assert.Equal(t, Answer{Text: "text"}, a)
	conn.Close()
	assert.Equal(t, []string{"client", "first", "second"}, stopped)
}

// TestConnectStopsWhatAFailedDialStarted: Dial's error is returned, and
// what it had started is stopped.
func TestConnectStopsWhatAFailedDialStarted(t *testing.T) {
	var stopped []string
	_, err := fakeKit(&stopped, errors.New("refused")).connect(context.Background(), struct{}{}, nil, InMemory)
	require.EqualError(t, err, "refused")
	assert.Equal(t, []string{"first", "second"}, stopped)
}
