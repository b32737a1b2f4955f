package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProgressOnTheCallsStream: over streamable HTTP, with the client's
// standalone GET stream open, the upstream's progress notifications reach
// the client on the POST response stream of the call they are about,
// before its result. go-sdk's streamable HTTP server sends a notification
// on the stream of the request its context names, and on the session's
// standalone stream when the context names none; there it raced the
// result, and reached the client after it under load (a6f146d). Which
// stream a message came on is read off the HTTP responses (streamTap), so
// the test needs no load: a notification sent with the wrong context is
// never on the POST stream.
func TestProgressOnTheCallsStream(t *testing.T) {
	url, stderr := startHTTPProxy(t, "-config", leakyConfig(t, ""), "--", os.Args[0])
	tap := newStreamTap()
	t.Cleanup(tap.transport.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	progress := make(chan struct{}, 100)
	client := mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress <- struct{}{} },
	})
	// 2025-11-25 is the newest version with the standalone GET stream
	// (SEP-2575 removes it), which go-sdk's client opens by default.
	cs, err := client.Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tap}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err, "connect to the proxy:\n%s", stderr)
	defer cs.Close()
	// Once the GET's headers are back, the server has the stream: a
	// notification sent on the session's standalone stream goes there.
	select {
	case <-tap.getOpen:
	case <-ctx.Done():
		t.Fatalf("the client's standalone GET stream did not open:\n%s", stderr)
	}

	params := &mcp.CallToolParams{Name: "progress"}
	params.SetProgressToken("client-token-1")
	res, err := cs.CallTool(ctx, params)
	require.NoError(t, err)
	require.Equal(t, "done", text(res))
	// The client hands a notification to its handler after it has read it,
	// so once the handler has all three, the tap has them too, wherever
	// they came.
	for i := range 3 {
		select {
		case <-progress:
		case <-ctx.Done():
			t.Fatalf("progress notification %d did not reach the client; the call's stream had %v, the standalone one %v",
				i+1, tap.messages("POST tools/call"), tap.messages("GET"))
		}
	}

	want := []string{"progress client-token-1 1", "progress client-token-1 2", "progress client-token-1 3", "result"}
	assert.Equal(t, want, tap.messages("POST tools/call"), "the call's POST stream, in the order the client read it")
	assert.Empty(t, tap.messages("GET"), "the standalone GET stream")
}

// streamTap is an http.RoundTripper that records the JSON-RPC messages in
// the server-sent events of every response, under the stream they came
// on: "GET" for the standalone stream, "POST <method>" for the response
// stream of a POST.
type streamTap struct {
	transport *http.Transport
	getOpen   chan struct{} // closed when a GET answers with an event stream
	once      sync.Once

	mu  sync.Mutex
	got map[string][]tappedMessage // by stream, in the order the client read them
}

func newStreamTap() *streamTap {
	return &streamTap{transport: http.DefaultTransport.(*http.Transport).Clone(), getOpen: make(chan struct{}),
		got: map[string][]tappedMessage{}}
}

// tappedMessage is what the test looks at in a JSON-RPC message.
type tappedMessage struct {
	Method string `json:"method"`
	Params struct {
		ProgressToken any     `json:"progressToken"`
		Progress      float64 `json:"progress"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
}

func (m tappedMessage) String() string {
	switch {
	case m.Method == "notifications/progress":
		return fmt.Sprintf("progress %v %v", m.Params.ProgressToken, m.Params.Progress)
	case m.Method != "":
		return m.Method
	case m.Result != nil:
		return "result"
	}
	return "other"
}

// messages is what came on stream so far, each as tappedMessage.String.
func (t *streamTap) messages(stream string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s []string
	for _, m := range t.got[stream] {
		s = append(s, m.String())
	}
	return s
}

func (t *streamTap) RoundTrip(r *http.Request) (*http.Response, error) {
	stream := r.Method
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		stream += " " + m.Method
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := t.transport.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		return resp, nil
	}
	if r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		t.once.Do(func() { close(t.getOpen) })
	}
	resp.Body = &sseTap{r: resp.Body, data: func(b []byte) {
		var m tappedMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		t.mu.Lock()
		t.got[stream] = append(t.got[stream], m)
		t.mu.Unlock()
	}}
	return resp, nil
}

// sseTap passes an event stream through and calls data with each "data:"
// line as it is read: before the client can act on the event the line is
// in, since the event ends only at the blank line after it.
type sseTap struct {
	r    io.ReadCloser
	data func([]byte)
	line []byte
}

func (s *sseTap) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	for chunk := b[:n]; len(chunk) > 0; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			s.line = append(s.line, chunk...)
			break
		}
		s.line = append(s.line, chunk[:i]...)
		if d, ok := bytes.CutPrefix(bytes.TrimRight(s.line, "\r"), []byte("data:")); ok {
			s.data(bytes.TrimSpace(d))
		}
		s.line = s.line[:0]
		chunk = chunk[i+1:]
	}
	return n, err
}

func (s *sseTap) Close() error { return s.r.Close() }
