package mcpsdk_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/internal/hostileframes"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx/adapter"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// unguarded runs the frame tests without the guard, to show what they
// catch: TOOLMW_TEST_NO_FRAME_GUARD=1 go test ./toolctx/mcpsdk -run HostileFrames
var unguarded = os.Getenv("TOOLMW_TEST_NO_FRAME_GUARD") == "1"

// paramsTypes are the params type of each method go-sdk v1.8.0's server
// decodes (serverMethodInfos, mcp/server.go); TestFrameCodecMethods holds
// the guard's table to the same methods.
var paramsTypes = map[string]reflect.Type{
	"completion/complete":      reflect.TypeFor[mcp.CompleteParams](),
	"server/discover":          reflect.TypeFor[mcp.DiscoverParams](),
	"initialize":               reflect.TypeFor[mcp.InitializeParams](),
	"ping":                     reflect.TypeFor[mcp.PingParams](),
	"prompts/list":             reflect.TypeFor[mcp.ListPromptsParams](),
	"prompts/get":              reflect.TypeFor[mcp.GetPromptParams](),
	"tools/list":               reflect.TypeFor[mcp.ListToolsParams](),
	"tools/call":               reflect.TypeFor[mcp.CallToolParamsRaw](),
	"resources/list":           reflect.TypeFor[mcp.ListResourcesParams](),
	"resources/templates/list": reflect.TypeFor[mcp.ListResourceTemplatesParams](),
	"resources/read":           reflect.TypeFor[mcp.ReadResourceParams](),
	//lint:ignore SA1019 logging is deprecated in protocol 2026-07-28, still served and decoded
	"logging/setLevel":          reflect.TypeFor[mcp.SetLoggingLevelParams](),
	"resources/subscribe":       reflect.TypeFor[mcp.SubscribeParams](),
	"subscriptions/listen":      reflect.TypeFor[mcp.SubscriptionsListenParams](),
	"resources/unsubscribe":     reflect.TypeFor[mcp.UnsubscribeParams](),
	"notifications/cancelled":   reflect.TypeFor[mcp.CancelledParams](),
	"notifications/initialized": reflect.TypeFor[mcp.InitializedParams](),
	//lint:ignore SA1019 roots are deprecated in protocol 2026-07-28, still served and decoded
	"notifications/roots/list_changed": reflect.TypeFor[mcp.RootsListChangedParams](),
	"notifications/progress":           reflect.TypeFor[mcp.ProgressNotificationParams](),
}

// sdkHostileFrames is every hostile frame: the envelopes, and for every
// method the server decodes, params that are not objects and every params
// field (to depth 2) of every wrong JSON type.
func sdkHostileFrames() map[string]string {
	frames := hostileframes.Envelopes()
	for m, typ := range paramsTypes {
		for k, v := range hostileframes.Params(m, typ) {
			frames[k] = v
		}
	}
	return frames
}

const sdkInit = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// frameServer is a go-sdk server with a tool, a prompt, a resource and
// completions behind the adapter, logging to l.
func frameServer(l *slog.Logger) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "frames", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Logger:             l,
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		X string `json:"x"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + in.X}}}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	s.AddResource(&mcp.Resource{URI: "r://x", Name: "x"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	mcpsdk.Install(s, middleware.New().Middleware(), mcpsdk.WithFallbackLogger(l))
	return s
}

// wire is one raw client session: send writes a frame and returns what
// came back in answer to that write itself (an HTTP response's body), and
// whether the frame went on to the server's session (false: refused at
// the door, or not representable on the transport); answers, when not
// nil, carries what the server sends on its stream.
type wire struct {
	send    func(t *testing.T, frame string) ([]byte, bool)
	answers <-chan []byte
}

func guardTransport(t mcp.Transport, l *slog.Logger) mcp.Transport {
	if unguarded {
		return t
	}
	return mcpsdk.GuardTransport(t, mcpsdk.WithFallbackLogger(l))
}

func guardHTTP(h http.Handler, l *slog.Logger) http.Handler {
	if unguarded {
		return h
	}
	return httpmw.CheckFrames(mcpsdk.NewFrameGuard(mcpsdk.WithFallbackLogger(l)))(h)
}

func wireIO(t *testing.T, s *mcp.Server, l *slog.Logger) wire {
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ss, err := s.Connect(context.Background(), guardTransport(&mcp.IOTransport{Reader: serverIn, Writer: serverOut}, l), nil)
	require.NoError(t, err)
	answers := make(chan []byte, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(answers)
		sc := bufio.NewScanner(clientIn)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			answers <- bytes.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() {
		_ = ss.Close()
		_ = clientOut.Close()
		_ = clientIn.Close()
		<-done
	})
	var mu sync.Mutex
	return wire{answers: answers, send: func(t *testing.T, frame string) ([]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		_, err := io.WriteString(clientOut, frame+"\n")
		require.NoError(t, err, "the server closed the connection before %s", frame)
		return nil, true
	}}
}

// wireInMemory sends what the in-memory transport can carry: a frame
// go-sdk's own codec decodes (its envelope never reaches a server
// otherwise); the others return nil unsent.
func wireInMemory(t *testing.T, s *mcp.Server, l *slog.Logger) wire {
	st, ct := mcp.NewInMemoryTransports()
	return wireConn(t, s, guardTransport(st, l), ct)
}

// wireConn connects s to st and speaks to it through ct, the other end,
// in messages go-sdk's codec decodes.
func wireConn(t *testing.T, s *mcp.Server, st, ct mcp.Transport) wire {
	ss, err := s.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	conn, err := ct.Connect(context.Background())
	require.NoError(t, err)
	answers := make(chan []byte, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(answers)
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			b, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				return
			}
			answers <- b
		}
	}()
	t.Cleanup(func() {
		_ = ss.Close()
		_ = conn.Close()
		<-done
	})
	return wire{answers: answers, send: func(t *testing.T, frame string) ([]byte, bool) {
		msg, err := jsonrpc.DecodeMessage([]byte(frame))
		if req, ok := msg.(*jsonrpc.Request); err != nil || (ok && req.Method == "") {
			return nil, false // an empty method is not encoded: the message would be a response
		}
		require.NoError(t, conn.Write(context.Background(), msg), "the server closed the connection")
		return nil, true
	}}
}

// otherTransport is a transport GuardTransport does not know (none of
// stdio, IO or in-memory): its connection decodes the messages itself, so
// the guard checks the params of the requests it reads (guardedConn).
type otherTransport struct{ mcp.Transport }

// wireOther is wireInMemory with the server's end behind otherTransport.
func wireOther(t *testing.T, s *mcp.Server, l *slog.Logger) wire {
	st, ct := mcp.NewInMemoryTransports()
	return wireConn(t, s, guardTransport(otherTransport{st}, l), ct)
}

// wireInMemoryRaw writes raw lines on the client's end of an in-memory
// pipe: every frame, envelopes go-sdk cannot decode included, which the
// guard answers there as on IO.
func wireInMemoryRaw(t *testing.T, s *mcp.Server, l *slog.Logger) wire {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), guardTransport(st, l), nil)
	require.NoError(t, err)
	p, ok := mcpsdk.InMemoryPipe(ct)
	require.True(t, ok, "go-sdk's InMemoryTransport is still its pipe")
	send, lines := rawLines(t, p)
	answers := make(chan []byte, 1024)
	go func() {
		defer close(answers)
		for l := range lines {
			answers <- []byte(l)
		}
	}()
	t.Cleanup(func() { _ = ss.Close() })
	var mu sync.Mutex
	return wire{answers: answers, send: func(t *testing.T, frame string) ([]byte, bool) {
		mu.Lock()
		defer mu.Unlock()
		send(frame)
		return nil, true
	}}
}

func post(t *testing.T, url, session, frame string) (*http.Response, []byte) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(frame))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

func wireStreamable(stateless bool) func(t *testing.T, s *mcp.Server, l *slog.Logger) wire {
	return func(t *testing.T, s *mcp.Server, l *slog.Logger) wire {
		ts := httptest.NewServer(guardHTTP(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: stateless}), l))
		t.Cleanup(ts.Close)
		var mu sync.Mutex
		session := ""
		t.Cleanup(func() { // ends the stateful session
			if session == "" {
				return
			}
			req, err := http.NewRequest(http.MethodDelete, ts.URL, nil)
			require.NoError(t, err)
			req.Header.Set("Mcp-Session-Id", session)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
		})
		return wire{send: func(t *testing.T, frame string) ([]byte, bool) {
			mu.Lock()
			defer mu.Unlock()
			resp, b := post(t, ts.URL, session, frame)
			if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
				session = id
			}
			return b, true
		}}
	}
}

func wireSSE(t *testing.T, s *mcp.Server, l *slog.Logger) wire {
	ts := httptest.NewServer(guardHTTP(mcpsdk.SSE(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)), l))
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	events := make(chan []byte, 1024)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
				events <- bytes.Clone(bytes.TrimSpace(d))
			}
		}
	}()
	endpoint := string(<-events)
	require.NotEmpty(t, endpoint, "the endpoint event")
	return wire{answers: events, send: func(t *testing.T, frame string) ([]byte, bool) {
		resp, b := post(t, ts.URL+endpoint, "", frame)
		return b, resp.StatusCode == http.StatusAccepted
	}}
}

var frameWires = map[string]func(*testing.T, *mcp.Server, *slog.Logger) wire{
	"in-memory":                 wireInMemory,
	"in-memory raw":             wireInMemoryRaw,
	"other transport":           wireOther,
	"io":                        wireIO,
	"streamable-http":           wireStreamable(false),
	"streamable-http stateless": wireStreamable(true),
	"sse":                       wireSSE,
}

// session drives a wire: every frame gets a fresh id, is followed by a
// ping, and what the client receives up to the ping's answer is the
// frame's (an answer the SDK sends later is collected by the end).
type session struct {
	w     wire
	n     int
	all   bytes.Buffer
	owed  map[string]bool // ids of requests sent and not yet answered
	t     *testing.T
	frame string // the frame being exchanged, for the messages
}

// idRe marks the ids the session rewrites.
var idForms = []string{`"id":2,`, `"id":3,`, `"id":7,`}

func (s *session) exchange(frame string) []byte {
	s.n++
	s.frame = frame
	id := fmt.Sprintf(`"f%d"`, s.n)
	for _, f := range idForms {
		frame = strings.ReplaceAll(frame, f, `"id":`+id+`,`)
	}
	body, sent := s.w.send(s.t, frame)
	if sent && strings.Contains(frame, `"id":`+id) {
		s.owed[strings.Trim(id, `"`)] = true
	}
	got := append([]byte(nil), body...)
	s.noteIDs(got)
	if s.w.answers == nil {
		s.all.Write(got)
		return got
	}
	sync := fmt.Sprintf("sync%d", s.n)
	s.w.send(s.t, `{"jsonrpc":"2.0","id":"`+sync+`","method":"ping"}`)
	null := false
	got = append(got, s.until(func(ids map[string]bool) bool {
		null = null || ids["<nil>"]
		return ids[sync]
	})...)
	if null { // the frame was answered with a null id: its own is never answered
		delete(s.owed, strings.Trim(id, `"`))
	}
	s.all.Write(got)
	return got
}

// call is exchange for a request the test expects answered by its id: it
// returns once the answer has come.
func (s *session) call(frame string) []byte {
	got := s.exchange(frame)
	if s.w.answers != nil && len(s.owed) > 0 {
		more := s.until(func(map[string]bool) bool { return len(s.owed) == 0 })
		s.all.Write(more)
		got = append(got, more...)
	}
	return got
}

// until reads answers until done says so of the ids answered.
func (s *session) until(done func(ids map[string]bool) bool) []byte {
	var got []byte
	ids := map[string]bool{}
	deadline := time.After(10 * time.Second) // a bound on a broken test, not a measure
	for !done(ids) {
		select {
		case b, ok := <-s.w.answers:
			require.True(s.t, ok, "the server closed the connection after %s; received so far: %s", s.frame, got)
			got = append(append(got, b...), '\n')
			for _, id := range s.noteIDs(b) {
				ids[id] = true
			}
		case <-deadline:
			s.t.Fatalf("no answer to %s (ids owed: %v); received: %s", s.frame, s.owed, got)
		}
	}
	return got
}

// noteIDs records the ids answered in b (one message or a batch, or SSE
// data lines of either).
func (s *session) noteIDs(b []byte) []string {
	var ids []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:")))
		var one struct {
			ID any `json:"id"`
		}
		var many []struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(line, &one) == nil {
			ids = append(ids, fmt.Sprint(one.ID))
		} else if json.Unmarshal(line, &many) == nil {
			for _, m := range many {
				ids = append(ids, fmt.Sprint(m.ID))
			}
		}
	}
	for _, id := range ids {
		delete(s.owed, id)
	}
	return ids
}

// No byte a client receives for a hostile frame, on any go-sdk transport,
// holds Go's vocabulary (a type name, a package path, the decoder's text),
// and no hostile frame ends the session: a frame the SDK cannot decode is
// answered with a fixed JSON-RPC error and the decoder's text goes to the
// fallback logger.
func TestHostileFramesNameNoGoInternals(t *testing.T) {
	frames := sdkHostileFrames()
	require.Greater(t, len(frames), 300, "the table covers every field of every method")
	for name, mk := range frameWires {
		t.Run(name, func(t *testing.T) {
			var logs syncbuf.Buffer
			l := slog.New(slog.NewTextHandler(&logs, nil))
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the server's log:\n%s", logs.String())
				}
			})
			s := &session{w: mk(t, frameServer(l), l), owed: map[string]bool{}, t: t}
			require.Contains(t, string(s.call(sdkInit)), `"result"`, "the session is initialized")
			s.w.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for _, k := range hostileframes.Sorted(frames) {
				t.Logf("frame f%d: %s", s.n+1, k)
				got := s.exchange(frames[k])
				for _, m := range hostileframes.GoInternals() {
					if !assert.NotContains(t, string(got), m, "%s: the client received Go's text for %s", k, frames[k]) {
						break
					}
				}
			}
			if s.w.answers != nil && len(s.owed) > 0 {
				s.all.Write(s.until(func(map[string]bool) bool { return len(s.owed) == 0 }))
			}
			for _, m := range hostileframes.GoInternals() {
				assert.NotContains(t, s.all.String(), m, "what the client received over the session")
			}
			got := s.call(hostileframes.Request("2", "tools/call", `{"name":5}`))
			assert.Contains(t, string(got), `"code":-32602`, "go-sdk's code for params that do not decode")
			assert.Contains(t, string(got), `"message":"invalid request: its params do not match the method's"`)
			assert.Contains(t, logs.String(), "cannot unmarshal", "the decoder's text is the server's")
			assert.Contains(t, string(s.call(hostileframes.Request("2", "tools/call", `{"name":"echo","arguments":{"x":"a"}}`))),
				`ok a`, "a well-formed call still runs, on the same session")
		})
	}
}

// rawLines is a guarded server session spoken to in raw lines over rw (the
// client's end), with the lines the server sends.
func rawLines(t *testing.T, rw io.ReadWriteCloser) (send func(string), lines <-chan string) {
	out := make(chan string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		sc := bufio.NewScanner(rw)
		for sc.Scan() {
			out <- sc.Text()
		}
	}()
	t.Cleanup(func() { _ = rw.Close(); <-done })
	return func(line string) {
		_, err := io.WriteString(rw, line+"\n")
		require.NoError(t, err, "the server closed the connection before %s", line)
	}, out
}

// answerTo waits for the line that answers id, or fails when the
// connection closes first.
func answerTo(t *testing.T, lines <-chan string, id string) string {
	t.Helper()
	deadline := time.After(10 * time.Second) // a bound on a broken test, not a measure
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the server closed the connection before answering %s", id)
			if strings.Contains(l, `"id":`+id) || (id == "null" && strings.Contains(l, `"id":null`)) {
				return l
			}
		case <-deadline:
			t.Fatalf("no answer to %s", id)
		}
	}
}

// On go-sdk's stream transports (IO, stdio, in memory) a session of
// protocol 2025-06-18 or later has no batches: go-sdk refuses one by
// closing the connection; the guard answers it with a fixed -32600 and the
// session goes on. An older session's batch is served, as go-sdk serves
// it. In memory this needs go-sdk's own connection, which learns the
// session's version: a wrapper of the connection hides that from it, and
// the batch is then served whatever the version (so this fails with the
// connection wrapped, and on IO with the guard's stream unaware of the
// version).
func TestGuardRefusesBatchesOfNewSessions(t *testing.T) {
	ends := map[string]func(t *testing.T, s *mcp.Server, l *slog.Logger) io.ReadWriteCloser{
		"io": func(t *testing.T, s *mcp.Server, l *slog.Logger) io.ReadWriteCloser {
			serverIn, clientOut := io.Pipe()
			clientIn, serverOut := io.Pipe()
			ss, err := s.Connect(context.Background(), mcpsdk.GuardTransport(&mcp.IOTransport{Reader: serverIn, Writer: serverOut}, mcpsdk.WithFallbackLogger(l)), nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ss.Close() })
			return struct {
				io.Reader
				io.Writer
				io.Closer
			}{clientIn, clientOut, multiCloser{clientIn, clientOut}}
		},
		"in-memory": func(t *testing.T, s *mcp.Server, l *slog.Logger) io.ReadWriteCloser {
			st, ct := mcp.NewInMemoryTransports()
			ss, err := s.Connect(context.Background(), mcpsdk.GuardTransport(st, mcpsdk.WithFallbackLogger(l)), nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ss.Close() })
			p, ok := mcpsdk.InMemoryPipe(ct)
			require.True(t, ok, "go-sdk's InMemoryTransport is still its pipe")
			return p
		},
	}
	batch := `[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"tools/list"}]`
	for name, end := range ends {
		for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
			t.Run(name+" "+version, func(t *testing.T) {
				var logs syncbuf.Buffer
				l := slog.New(slog.NewTextHandler(&logs, nil))
				send, lines := rawLines(t, end(t, frameServer(l), l))
				send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
				require.Contains(t, answerTo(t, lines, `"init"`), `"protocolVersion":"`+version+`"`)
				send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				send(batch)
				if version < "2025-06-18" {
					got := answerTo(t, lines, `"b1"`)
					assert.True(t, strings.HasPrefix(got, "["), "a batch answered as a batch: %s", got)
					assert.Contains(t, got, `"id":"b2"`)
				} else {
					got := answerTo(t, lines, "null")
					assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"`+adapter.MsgFrameBatch+`"}}`, got)
					assert.Contains(t, logs.String(), "a batch on a session of protocol "+version)
				}
				send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
				assert.Contains(t, answerTo(t, lines, `"after"`), `"result":{}`, "the session goes on")
			})
		}
	}
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	for _, c := range m {
		_ = c.Close()
	}
	return nil
}
