package adapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// MCP's stdio transport (and any stream transport of an SDK: go-sdk's
// IOTransport and in-memory pipes) delimits messages by newlines, and an
// SDK decodes what it reads there inside the transport, where no hook of
// the SDK's runs first. [FrameGuard.Stream] puts the guard between the
// stream and the SDK: it reads each line before the SDK does and answers
// the lines the SDK could not decode itself. It knows bytes only, so any
// adapter of a line-delimited transport uses it as it is (toolctx/mcpsdk
// on go-sdk's transports, examples/adapter on its own loop).

// MsgFrameBatch answers a batch (a JSON array of messages) on a session
// whose protocol version is 2025-06-18 or later: that version removed
// JSON-RPC batching (-32600).
const MsgFrameBatch = "invalid request: this session's protocol version has no JSON-RPC batches"

// noBatchesFrom is the first protocol version without JSON-RPC batches.
// Versions are dates: they compare as strings.
const noBatchesFrom = "2025-06-18"

// ErrLineTooLong ends a [FrameGuard.Stream] whose peer sent a line longer
// than the stream's bound.
var ErrLineTooLong = errors.New("an incoming line exceeded the transport's maximum line length")

// Stream guards a newline-delimited JSON-RPC stream: r is what the peer
// sends, w where the server writes. Give the SDK the returned reader and
// writer in their place. The reader hands on each line the SDK can decode
// ([FrameGuard.CheckFrame]: one message or a batch) and answers the others
// itself, on the writer (the request's id when it could be read, else
// null; a notification is dropped); only one goroutine (the SDK's reading
// one) may call Read. A line longer than maxLine bytes ends the stream
// with [ErrLineTooLong], as an SDK's own limit does (maxLine <= 0: no
// bound). The writer is safe for concurrent use and keeps each Write whole
// (an SDK writes each message, or batch, with one Write): the guard's
// answers go between the SDK's messages, never inside one. On its way out
// an error response whose message holds a decoder's text (a shape the
// guard did not foresee) gets the fixed one ([ScrubError]).
//
// The stream learns its session's protocol version from the server's
// answer to the client's initialize. From 2025-06-18 on, the protocol has
// no batches (go-sdk then refuses one by closing the connection, for every
// call on it): a batch is answered with [MsgFrameBatch] and the session
// goes on. A batch the client sends before the server has answered its
// initialize is checked as on an older session (the SDK answers
// initialize before it reads on, but the guard reads ahead of it).
//
// Closing the reader closes r, and closing the writer w, when they are
// io.Closers.
func (g *FrameGuard) Stream(r io.Reader, w io.Writer, maxLine int) (io.ReadCloser, io.WriteCloser) {
	out := &streamWriter{w: w}
	return &streamReader{g: g, src: bufio.NewReader(r), r: r, out: out, limit: maxLine}, out
}

// streamReader is a Stream's reader.
type streamReader struct {
	g       *FrameGuard
	src     *bufio.Reader
	r       io.Reader
	out     *streamWriter
	limit   int
	line    []byte
	pending []byte
	err     error
}

func (r *streamReader) Read(p []byte) (int, error) {
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
		if answer, pass := r.check(frame); pass {
			r.pending = line
		} else if answer != nil {
			if _, werr := r.out.Write(append(answer, '\n')); werr != nil {
				r.err = werr
			}
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// check is CheckFrame, with the session's rules: no batch from 2025-06-18
// on, and the id of an initialize noted, for the version its answer
// carries.
func (r *streamReader) check(frame []byte) ([]byte, bool) {
	ctx := context.Background()
	if frame[0] == '[' {
		if v := r.out.session.version(); v >= noBatchesFrom {
			r.g.log(ctx, "", "a batch on a session of protocol "+v, nil)
			return (&Refusal{Code: CodeInvalidRequest, Message: MsgFrameBatch}).Answer(), false
		}
	}
	answer, pass := r.g.CheckFrame(ctx, frame)
	if pass && frame[0] == '{' && bytes.Contains(frame, []byte(`"initialize"`)) {
		r.out.session.expect(frame)
	}
	return answer, pass
}

// readLine reads through the next newline (kept) or the end of the input.
func (r *streamReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		chunk, err := r.src.ReadSlice('\n')
		r.line = append(r.line, chunk...)
		if r.limit > 0 && len(r.line) > r.limit {
			return nil, ErrLineTooLong
		}
		if err != bufio.ErrBufferFull {
			return r.line, err
		}
	}
}

func (r *streamReader) Close() error { return closeOf(r.r) }

func closeOf(v any) error {
	if c, ok := v.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// streamWriter is a Stream's writer: whole writes, decoder text scrubbed,
// and the session's protocol version read from the answer to initialize.
type streamWriter struct {
	mu      sync.Mutex // held across a write: each leaves whole
	w       io.Writer
	session session
}

func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session.waiting.Load() && bytes.Contains(p, []byte(`"protocolVersion"`)) {
		s.session.learn(p)
	}
	if q, changed := scrubLine(p); changed {
		if _, err := s.w.Write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return s.w.Write(p)
}

func (s *streamWriter) Close() error { return closeOf(s.w) }

// session is what a Stream knows of its session's protocol version, under
// a lock of its own: the reader asks it while a Write may be blocked on a
// peer that is not reading.
type session struct {
	waiting atomic.Bool // an initialize awaits its answer (initID)
	mu      sync.Mutex
	initID  any
	proto   string // the version the server answered initialize with
}

// expect notes the id of frame, a request the guard passed, when it is an
// initialize and the session's version is not known yet.
func (s *session) expect(frame []byte) {
	var m struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
	}
	if json.Unmarshal(frame, &m) != nil || m.Method != "initialize" {
		return
	}
	switch m.ID.(type) {
	case string, float64: // comparable, as learn compares them
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proto == "" && !s.waiting.Load() {
		s.initID = m.ID
		s.waiting.Store(true)
	}
}

// learn reads the version of p, a line the server writes, when it is the
// answer to the initialize awaited.
func (s *session) learn(p []byte) {
	var m struct {
		ID     any `json:"id"`
		Result *struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(p, &m) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.waiting.Load() || m.ID != s.initID {
		return
	}
	s.waiting.Store(false)
	if m.Result != nil {
		s.proto = m.Result.ProtocolVersion
	}
}

func (s *session) version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proto
}

// ScrubError is the net under a FrameGuard: an error an SDK answers with
// its decoder's text ("... unmarshaling \"...\" into a *mcp.X: json: cannot
// unmarshal ..."), for a shape the guard did not foresee (a method a later
// SDK adds, say), gets [MsgFrameParams] and keeps its code (0 becomes
// [CodeInvalidParams]). It returns the code and message to send, and
// whether message was such a text; any other message is returned as it is.
func ScrubError(code int64, message string) (int64, string, bool) {
	if !strings.Contains(message, "unmarshaling ") && !strings.Contains(message, "json: ") && !strings.Contains(message, "cannot unmarshal") {
		return code, message, false
	}
	if code == 0 {
		code = CodeInvalidParams
	}
	return code, MsgFrameParams, true
}

// scrubLine is ScrubError for an encoded line (one message or a batch) a
// server writes on a stream; a line with no error object is returned as it
// is, without being decoded.
func scrubLine(p []byte) ([]byte, bool) {
	if !bytes.Contains(p, []byte(`"error":`)) || !bytes.Contains(p, []byte(`"message":`)) {
		return p, false
	}
	var one map[string]json.RawMessage
	var many []map[string]json.RawMessage
	var v any = &many
	if json.Unmarshal(p, &one) == nil {
		many, v = []map[string]json.RawMessage{one}, one
	} else if json.Unmarshal(p, &many) != nil {
		return p, false
	}
	changed := false
	for _, m := range many {
		changed = scrubWire(m) || changed
	}
	if !changed {
		return p, false
	}
	b, err := json.Marshal(v)
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
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	var changed bool
	if e.Code, e.Message, changed = ScrubError(e.Code, e.Message); !changed {
		return false
	}
	b, err := json.Marshal(e)
	if err != nil {
		return false
	}
	m["error"] = b
	return true
}
