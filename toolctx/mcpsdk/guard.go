package mcpsdk

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// NewFrameGuard returns go-sdk's frame guard (see adapter.FrameGuard): it
// decides, as go-sdk's decoders would, whether the SDK can decode a
// JSON-RPC frame, and answers one it cannot with a fixed message, logging
// the decoder's text to the fallback logger. [GuardTransport] uses it;
// give it to httpmw.CheckFrames in front of mcp.NewStreamableHTTPHandler
// and mcp.NewSSEHandler. The options are the adapter's (only
// WithFallbackLogger matters here); a bad one panics.
func NewFrameGuard(opts ...Option) *adapter.FrameGuard {
	return newFrameGuard(mustConfig("NewFrameGuard", opts))
}

// GuardTransport returns t with every incoming message checked before
// go-sdk decodes it, so that what the SDK's decoder would say of a bad one
// (Go type names, "json: cannot unmarshal ...") never reaches the client:
//
//	err := server.Run(ctx, mcpsdk.GuardTransport(&mcp.StdioTransport{}))
//
// go-sdk has no hook before it decodes a message, and a server's transport
// is whatever the caller hands to Server.Run or Server.Connect, so the
// adapter cannot do this by itself.
//
// On an [*mcp.StdioTransport] or an [*mcp.IOTransport] the guard reads each
// line (one message or a batch; MCP's stdio transport delimits messages by
// newlines) before the SDK does, and answers one the SDK could not decode
// itself, with a fixed JSON-RPC error (the request's id when it could be
// read, else null): params of the wrong shape, and an envelope the SDK
// refuses ("id":{}, "jsonrpc":"1.0", invalid JSON, nesting deeper than
// 1000), which would otherwise end the connection for every call on it. A
// line longer than the transport's MaxLineLength ends the connection, as
// the SDK's own limit does. A notification the SDK could not decode is
// dropped (the SDK drops it too, after logging).
//
// Any other transport (an [*mcp.InMemoryTransport], say) carries messages
// the SDK decodes inside the transport; there the guard checks each
// request's params before the server decodes them and answers one that
// does not decode with the fixed error; an envelope the transport cannot
// decode ends that connection, as it does without the guard.
//
// The options are the adapter's (only WithFallbackLogger matters here); a
// bad one panics.
func GuardTransport(t mcp.Transport, opts ...Option) mcp.Transport {
	g := newFrameGuard(mustConfig("GuardTransport", opts))
	switch t := t.(type) {
	case *mcp.StdioTransport:
		return ioTransport(g, os.Stdin, nopCloser{os.Stdout}, t.MaxLineLength)
	case *mcp.IOTransport:
		return ioTransport(g, t.Reader, t.Writer, t.MaxLineLength)
	}
	return &guardedTransport{inner: t, g: g}
}

func ioTransport(g *adapter.FrameGuard, r io.ReadCloser, w io.WriteCloser, limit int) *mcp.IOTransport {
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	out := &lockedWriter{w: w}
	return &mcp.IOTransport{
		Reader:        &frameReader{g: g, src: bufio.NewReader(r), closer: r, out: out, limit: limit},
		Writer:        out,
		MaxLineLength: limit,
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// lockedWriter makes each Write whole: the SDK writes each message with
// one Write, and the guard's answers go between them, never inside one.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q, changed := scrubLine(p); changed {
		if _, err := l.w.Write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// errLineTooLong ends a connection whose peer sent a line over the limit.
var errLineTooLong = errors.New("an incoming line exceeded the transport's MaxLineLength")

// frameReader is the SDK's reader: it hands on the lines the SDK can
// decode and answers the others itself. Only the SDK's reading goroutine
// calls Read.
type frameReader struct {
	g       *adapter.FrameGuard
	src     *bufio.Reader
	closer  io.Closer
	out     io.Writer
	limit   int // negative: none
	line    []byte
	pending []byte
	err     error
}

func (r *frameReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		line, err := r.readLine()
		if err != nil {
			r.err = err
		}
		frame := bytes.TrimSpace(line)
		if len(frame) == 0 {
			if err != nil && len(line) > 0 {
				r.pending = line // white space before the end: the SDK's to see
			}
			continue
		}
		answer, pass := r.g.CheckFrame(context.Background(), frame)
		switch {
		case pass:
			r.pending = line
		case answer != nil:
			if _, werr := r.out.Write(append(answer, '\n')); werr != nil {
				r.err = werr
			}
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// readLine reads through the next newline (kept) or the end of the input.
func (r *frameReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		chunk, err := r.src.ReadSlice('\n')
		r.line = append(r.line, chunk...)
		if r.limit > 0 && len(r.line) > r.limit {
			return nil, errLineTooLong
		}
		if err != bufio.ErrBufferFull {
			return r.line, err
		}
	}
}

func (r *frameReader) Close() error { return r.closer.Close() }

// guardedTransport checks the params of the requests its connection
// reads.
type guardedTransport struct {
	inner mcp.Transport
	g     *adapter.FrameGuard
}

func (t *guardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardedConn{Connection: c, g: t.g}, nil
}

type guardedConn struct {
	mcp.Connection
	g *adapter.FrameGuard
}

func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok {
			return msg, err
		}
		r := c.g.CheckParams(ctx, req.Method, req.Params, !req.ID.IsValid())
		if r == nil {
			return msg, nil
		}
		if r.Notification {
			continue
		}
		if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: int64(r.Code), Message: r.Message}}); err != nil {
			return nil, err
		}
	}
}

// The net under the guard: an error go-sdk answers with its decoder's
// text, for a shape the guard did not foresee (a method a later SDK adds,
// say), is rewritten on its way out to the guard's fixed message, with
// the SDK's code. decoderText is what the SDK's decoder's errors say
// ("... unmarshaling \"...\" into a *mcp.X: json: cannot unmarshal ...").
func decoderText(msg string) bool {
	return strings.Contains(msg, "unmarshaling ") || strings.Contains(msg, "json: ") || strings.Contains(msg, "cannot unmarshal")
}

// scrubResponse is msg with a decoder's text in its error replaced.
func scrubResponse(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil || !decoderText(resp.Error.Error()) {
		return msg
	}
	code := int64(adapter.CodeInvalidParams)
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) && we.Code != 0 {
		code = we.Code
	}
	out := *resp
	out.Error = &jsonrpc.Error{Code: code, Message: adapter.MsgFrameParams}
	return &out
}

func (c *guardedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	return c.Connection.Write(ctx, scrubResponse(msg))
}

// scrubLine is scrubResponse for an encoded line (one message or a batch)
// the SDK writes on stdio or an IO transport; a line with no error object
// is returned as it is, without being decoded.
func scrubLine(p []byte) ([]byte, bool) {
	if !bytes.Contains(p, []byte(`"error":`)) || !bytes.Contains(p, []byte(`"message":`)) {
		return p, false
	}
	var one map[string]json.RawMessage
	var many []map[string]json.RawMessage
	var b []byte
	var err error
	switch {
	case json.Unmarshal(p, &one) == nil:
		if !scrubWire(one) {
			return p, false
		}
		b, err = json.Marshal(one)
	case json.Unmarshal(p, &many) == nil:
		changed := false
		for _, m := range many {
			changed = scrubWire(m) || changed
		}
		if !changed {
			return p, false
		}
		b, err = json.Marshal(many)
	default:
		return p, false
	}
	if err != nil {
		return p, false
	}
	return append(b, '\n'), true
}

// scrubWire rewrites the error of one encoded response in place.
func scrubWire(m map[string]json.RawMessage) bool {
	raw, ok := m["error"]
	if !ok {
		return false
	}
	var e struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || !decoderText(e.Message) {
		return false
	}
	if e.Code == 0 {
		e.Code = adapter.CodeInvalidParams
	}
	e.Message = adapter.MsgFrameParams
	b, err := json.Marshal(e)
	if err != nil {
		return false
	}
	m["error"] = b
	return true
}
