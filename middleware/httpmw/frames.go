package httpmw

import (
	"bytes"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/felixge/httpsnoop"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// MsgFrameRefused is the public message of the [Report] that [CheckFrames]
// fills for a frame it refused (audit.HTTP's row): the client was answered
// with one of the frame guard's fixed messages.
const MsgFrameRefused = "refused a JSON-RPC frame the MCP handler cannot decode"

// CheckFrames returns HTTP middleware that checks the JSON-RPC frame of each
// POST with g before next (an SDK's MCP handler) reads it, so that a frame
// the SDK cannot decode is answered here with a fixed message and never
// with the decoder's text, which go-sdk's handlers send as they are (its
// streamable HTTP handler answers an envelope it cannot decode with 400
// "malformed payload: unmarshaling jsonrpc message: json: ...", and a
// request whose params do not decode with "... into a
// *mcp.CallToolParamsRaw: json: cannot unmarshal ..."). g is an adapter's
// frame guard (mcpsdk.NewFrameGuard); nil panics at construction.
//
// A frame g passes reaches next unchanged (the body is read first, in full,
// and handed on from memory). One it refuses is answered here:
//   - on streamable HTTP, in the POST's response: 200 with the JSON-RPC
//     error for a request whose id could be read, 400 with the error (a
//     null id) for a frame that is not a JSON-RPC message the SDK reads,
//     202 and no body for a notification (dropped, as the SDK drops it);
//   - on the SSE transport (the GET stream whose "endpoint" event named the
//     POST's URL went through this middleware), on that stream, as the SDK
//     answers, and the POST gets 202 Accepted.
//
// Either way the refusal is reported to an audit.HTTP outside (its row's
// code is invalid_request, its message [MsgFrameRefused], even when the
// status is 200 or 202), so the operator sees every frame refused here.
//
// A body that cannot be read is answered as MaxBodyBytes answers it.
func CheckFrames(g *adapter.FrameGuard) func(http.Handler) http.Handler {
	if g == nil {
		panic("httpmw.CheckFrames: the frame guard is nil")
	}
	return func(next http.Handler) http.Handler {
		c := &frameChecker{g: g, next: next, streams: map[string]*sseStream{}}
		return c
	}
}

type frameChecker struct {
	g    *adapter.FrameGuard
	next http.Handler

	mu      sync.Mutex
	streams map[string]*sseStream // by the endpoint's path and query
}

func (c *frameChecker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		c.serveStream(w, r)
		return
	case http.MethodPost:
	default:
		c.next.ServeHTTP(w, r)
		return
	}
	if r.Body == nil || r.Body == http.NoBody {
		c.next.ServeHTTP(w, r)
		return
	}
	body, ok := readBody(w, r, math.MaxInt64)
	if !ok {
		return
	}
	answer, pass := c.g.CheckFrame(r.Context(), body)
	if pass {
		r2 := r.WithContext(r.Context()) // a shallow copy
		r2.Body = bufferedBody{bytes.NewReader(body)}
		c.next.ServeHTTP(w, r2)
		return
	}
	// The refusal is the operator's to see: audit.HTTP's row gets its code
	// and fixed message, whatever the status (a JSON-RPC error with an id
	// is answered 200, a notification 202).
	if rep := ReportFrom(r.Context()); rep != nil {
		rep.Public = &errs.Public{Code: errs.CodeInvalidRequest, Message: MsgFrameRefused}
	}
	if s := c.stream(r.URL); s != nil {
		if answer != nil {
			s.send(answer)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if answer == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	status := http.StatusOK
	if bytes.HasPrefix(answer, []byte(`{"jsonrpc":"2.0","id":null,`)) {
		status = http.StatusBadRequest
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(answer, '\n'))
}

// sseStream is an SSE GET's response; the SDK's writes and flushes (go-sdk
// writes each event with one Write) and the answers are serialized, so that an answer
// is never written inside one of the SDK's events.
type sseStream struct {
	mu sync.Mutex
	w  http.ResponseWriter
}

func (s *sseStream) send(answer []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := make([]byte, 0, len(answer)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, answer...)
	b = append(b, "\n\n"...)
	if _, err := s.w.Write(b); err == nil {
		_ = http.NewResponseController(s.w).Flush()
	}
}

func (c *frameChecker) stream(u *url.URL) *sseStream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[u.Path+"?"+u.RawQuery]
}

// serveStream serves a GET, learning from the first event written whether
// it is an SSE session's stream and which URL its messages are posted to.
func (c *frameChecker) serveStream(w http.ResponseWriter, r *http.Request) {
	s := &sseStream{w: w}
	var key string
	seen := false // only the GET's handler goroutine writes before the key is set
	sw := httpsnoop.Wrap(w, httpsnoop.Hooks{Write: func(write httpsnoop.WriteFunc) httpsnoop.WriteFunc {
		return func(p []byte) (int, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !seen {
				seen = true
				if k, ok := endpointKey(r.URL, p); ok {
					key = k
					c.mu.Lock()
					c.streams[key] = s
					c.mu.Unlock()
				}
			}
			return write(p)
		}
	}, Flush: func(flush httpsnoop.FlushFunc) httpsnoop.FlushFunc {
		return func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			flush()
		}
	}})
	defer func() {
		if key != "" {
			c.mu.Lock()
			delete(c.streams, key)
			c.mu.Unlock()
		}
	}()
	c.next.ServeHTTP(sw, r)
}

// endpointKey is the path and query of the URI in an SSE "endpoint" event
// p, resolved against the GET's URL; false if p is not one.
func endpointKey(base *url.URL, p []byte) (string, bool) {
	var name, data string
	for line := range strings.SplitSeq(string(p), "\n") {
		if v, ok := strings.CutPrefix(line, "event:"); ok {
			name = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = strings.TrimSpace(v)
		}
	}
	if name != "endpoint" || data == "" {
		return "", false
	}
	u, err := base.Parse(data)
	if err != nil {
		return "", false
	}
	return u.Path + "?" + u.RawQuery, true
}
