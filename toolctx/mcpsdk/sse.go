package mcpsdk

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/felixge/httpsnoop"
)

// sseKey is the context key of the *sseSession [SSE] puts in the context
// of the session's GET, which every call of the session runs in.
type sseKey struct{}

// sseSession is one SSE session as [SSE] saw it open.
type sseSession struct {
	mu sync.Mutex
	id string
}

func (s *sseSession) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// SSE makes the calls of sessions served by the SDK's SSE handler (the
// 2024-11-05 HTTP+SSE transport) known to the adapter: their Request gets
// [toolctx.TransportSSE] and the session id the SDK gave the client (read
// from the endpoint event; the SDK tells neither). Put it right in front of
// the SDK's handler:
//
//	http.Handle("/sse", mcpsdk.SSE(mcp.NewSSEHandler(getServer, nil)))
//
// The context's identity and request id are the GET's, so the adapter
// does not use them for SSE calls (docs/adapters/mcpsdk.md, "The transport").
func SSE(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		s := &sseSession{}
		seen := false // only the GET's handler goroutine writes
		// The first event written to an SSE stream is the endpoint event.
		ew := httpsnoop.Wrap(w, httpsnoop.Hooks{Write: func(write httpsnoop.WriteFunc) httpsnoop.WriteFunc {
			return func(p []byte) (int, error) {
				if !seen {
					seen = true
					if id := endpointSessionID(p); id != "" {
						s.mu.Lock()
						s.id = id
						s.mu.Unlock()
					}
				}
				return write(p)
			}
		}})
		next.ServeHTTP(ew, r.WithContext(context.WithValue(r.Context(), sseKey{}, s)))
	})
}

// endpointSessionID returns the sessionid query parameter of the URI in an
// "endpoint" event, or "" if p is not one.
func endpointSessionID(p []byte) string {
	var name, data string
	sc := bufio.NewScanner(bytes.NewReader(p))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event:"); ok {
			name = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = strings.TrimSpace(v)
		}
	}
	if name != "endpoint" || data == "" {
		return ""
	}
	u, err := url.Parse(data)
	if err != nil {
		return ""
	}
	return u.Query().Get("sessionid")
}
