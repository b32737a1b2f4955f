package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress must reach the client before the result it precedes. go-sdk's
// client hands a response to its caller as soon as it is read, but queues
// incoming notifications for its handlers, so a call can return while the
// progress the upstream sent just before its result is still queued. The
// proxy therefore counts the progress notifications of each call as their
// bytes come off the upstream's stream (progressReader, in the order the
// upstream wrote them), and a call waits, after its result, until as many
// have been forwarded (progressRoute.drain).

// progressRoute is where an upstream progress notification goes, and how
// many of them the call has seen on the stream and forwarded.
type progressRoute struct {
	session *mcp.ServerSession
	token   any // the client's own token
	// call is the client's call's context, without its cancellation: go-sdk's
	// streamable HTTP server sends a notification on the stream of the
	// request its context names, and on the session's standalone stream
	// otherwise, where it can reach the client after the result.
	call context.Context

	mu        sync.Mutex
	seen      int
	forwarded int
	caught    chan struct{} // closed and replaced when forwarded grows
}

func newProgressRoute(call context.Context, s *mcp.ServerSession, token any) *progressRoute {
	return &progressRoute{session: s, token: token, call: context.WithoutCancel(call), caught: make(chan struct{})}
}

func (r *progressRoute) saw() {
	r.mu.Lock()
	r.seen++
	r.mu.Unlock()
}

func (r *progressRoute) sent() {
	r.mu.Lock()
	r.forwarded++
	close(r.caught)
	r.caught = make(chan struct{})
	r.mu.Unlock()
}

// drain waits until every notification seen has been forwarded, for d at
// most (a notification the SDK dropped is not waited for longer).
func (r *progressRoute) drain(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		r.mu.Lock()
		done, ch := r.forwarded >= r.seen, r.caught
		r.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		}
	}
}

// sawProgress counts a progress notification for the call whose proxy
// token is tok.
func (p *proxy) sawProgress(tok string) {
	if v, ok := p.progress.Load(tok); ok {
		v.(*progressRoute).saw()
	}
}

// maxProgressLine bounds the line progressReader keeps to look into: a
// progress notification is far smaller, and a longer line (a large
// result) is passed through unexamined.
const maxProgressLine = 64 << 10

// progressMark is in every line that holds a progress notification.
var progressMark = []byte(`"notifications/progress"`)

// progressReader passes the upstream's stream through and calls saw with
// the token of each progress notification in it, in order. The stream is
// newline-delimited JSON (stdio) or server-sent events, whose "data:" lines
// hold the messages (streamable HTTP, SSE).
type progressReader struct {
	r    io.ReadCloser
	saw  func(tok string)
	line []byte
	long bool // the current line passed maxProgressLine
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	chunk := b[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		if !pr.long {
			if len(pr.line)+len(part) > maxProgressLine {
				pr.long, pr.line = true, pr.line[:0]
			} else {
				pr.line = append(pr.line, part...)
			}
		}
		if i < 0 {
			break
		}
		if !pr.long {
			pr.examine(pr.line)
		}
		pr.line, pr.long = pr.line[:0], false
		chunk = chunk[i+1:]
	}
	return n, err
}

func (pr *progressReader) Close() error { return pr.r.Close() }

// examine calls saw for a line that is a progress notification.
func (pr *progressReader) examine(line []byte) {
	if !bytes.Contains(line, progressMark) {
		return
	}
	line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:"))
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ProgressToken any `json:"progressToken"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "notifications/progress" || msg.Params.ProgressToken == nil {
		return
	}
	pr.saw(fmt.Sprint(msg.Params.ProgressToken))
}

// progressRoundTripper puts a progressReader on every response body from
// an HTTP upstream.
type progressRoundTripper struct {
	next http.RoundTripper
	saw  func(tok string)
}

func (t progressRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &progressReader{r: resp.Body, saw: t.saw}
	}
	return resp, err
}
