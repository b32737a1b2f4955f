package mcpgo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/internal/hostileframes"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// goInternals are strings of Go's and its decoders' own vocabulary, which
// no byte a client receives may hold (the table both adapters' tests use).
var goInternals = hostileframes.GoInternals()

// hostileFrames are raw JSON-RPC frames a hostile client sends: numbers
// beyond float64, params fields of the wrong JSON type, deep nesting,
// invalid UTF-8, duplicate keys, truncated frames.
func hostileFrames() map[string]string {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	frames := hostileframes.Envelopes() // the envelopes both adapters' tests send
	for k, v := range map[string]string{
		"huge number in arguments": `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1e999999}}}`,
		"huge number in _meta":     `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1e999999}}}`,
		"huge number as id":        `{"jsonrpc":"2.0","id":1e999999,"method":"tools/call","params":{"name":"echo"}}`,
		"name a number":            `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}`,
		"params a string":          `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"str"}`,
		"params an array":          `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":[]}`,
		"task a number":            `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","task":5}}`,
		"arguments an array":       `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`,
		"cursor a number":          `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":5}}`,
		"ping params a number":     `{"jsonrpc":"2.0","id":2,"method":"ping","params":5}`,
		"capabilities a string":    `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":"x"}}`,
		"method a number":          `{"jsonrpc":"2.0","id":2,"method":5}`,
		"deep nesting":             `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":` + deep + `}}}`,
		"invalid UTF-8":            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"ec\xffho\",\"arguments\":{\"x\":\"\xfe\"}}}",
		"duplicate keys":           `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","name":"echo","arguments":{"x":"a","x":1e999999}}}`,
		"truncated":                `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ec`,
		"bad notification":         `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e999999}}`,
	} {
		frames[k] = v
	}
	return frames
}

// rawSender sends one raw frame to a server and returns every byte the
// client received for it (within a bound; a frame may get no answer).
type rawSender func(t *testing.T, frame string) []byte

const initFrame = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// parseServer is a server with one tool behind the adapter, logging to l.
func parseServer(l *slog.Logger) *server.MCPServer {
	s := server.NewMCPServer("parse", "1", mcpgo.ServerOption(middleware.New().Middleware(), mcpgo.WithFallbackLogger(l)))
	s.AddTool(mcp.NewTool("echo", mcp.WithString("x")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	return s
}

func rawInProcess(t *testing.T, s *server.MCPServer) rawSender {
	return func(t *testing.T, frame string) []byte {
		resp := s.HandleMessage(context.Background(), json.RawMessage(frame))
		if resp == nil {
			return nil
		}
		b, err := json.Marshal(resp)
		require.NoError(t, err)
		return b
	}
}

func rawStdio(t *testing.T, s *server.MCPServer) rawSender {
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = server.NewStdioServer(s).Listen(ctx, serverIn, serverOut)
	}()
	lines := make(chan []byte, 16)
	go func() {
		sc := bufio.NewScanner(clientIn)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- bytes.Clone(sc.Bytes())
		}
		close(lines)
	}()
	t.Cleanup(func() {
		cancel()
		_ = serverIn.Close()
		_ = clientOut.Close()
		_ = serverOut.Close()
		<-done
	})
	var mu sync.Mutex
	return func(t *testing.T, frame string) []byte {
		mu.Lock()
		defer mu.Unlock()
		_, err := io.WriteString(clientOut, frame+"\n")
		require.NoError(t, err)
		select {
		case b := <-lines:
			return b
		case <-time.After(2 * time.Second): // a frame without an answer (a notification)
			return nil
		}
	}
}

func rawHTTP(t *testing.T, s *server.MCPServer) rawSender {
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	t.Cleanup(ts.Close)
	return func(t *testing.T, frame string) []byte {
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(frame))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return b
	}
}

func rawSSE(t *testing.T, s *server.MCPServer) rawSender {
	sse := server.NewSSEServer(s)
	ts := httptest.NewServer(sse)
	t.Cleanup(ts.Close)
	t.Cleanup(sse.CloseSessions)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/sse", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	events := make(chan []byte, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
				events <- bytes.Clone(bytes.TrimSpace(d))
			}
		}
		close(events)
	}()
	var endpoint string
	select {
	case e := <-events:
		endpoint = string(e)
	case <-time.After(10 * time.Second):
		t.Fatal("no endpoint event")
	}
	var mu sync.Mutex
	return func(t *testing.T, frame string) []byte {
		mu.Lock()
		defer mu.Unlock()
		resp, err := http.Post(ts.URL+endpoint, "application/json", strings.NewReader(frame))
		require.NoError(t, err)
		post, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		select {
		case b := <-events:
			return append(post, b...)
		case <-time.After(2 * time.Second): // no answer on the stream (a notification, a frame refused at the POST)
			return post
		}
	}
}

// No byte a client receives for a hostile raw frame, on any mcp-go
// transport, holds Go's vocabulary (a type name, a struct field, a package
// path, encoding/json's text); a request mcp-go cannot decode is answered
// with -32600 and a fixed message, and the decoder's text goes to the
// fallback logger.
func TestHostileFramesNameNoGoInternals(t *testing.T) {
	for name, sender := range map[string]func(*testing.T, *server.MCPServer) rawSender{
		"in-process":      rawInProcess,
		"stdio":           rawStdio,
		"streamable-http": rawHTTP,
		"sse":             rawSSE,
	} {
		t.Run(name, func(t *testing.T) {
			var logs syncbuf.Buffer
			send := sender(t, parseServer(slog.New(slog.NewTextHandler(&logs, nil))))
			require.Contains(t, string(send(t, initFrame)), `"result"`, "the session is initialized")
			for frame, raw := range hostileFrames() {
				got := send(t, raw)
				for _, m := range goInternals {
					assert.NotContains(t, string(got), m, "%s: the client received Go's text: %s", frame, got)
				}
			}
			got := send(t, hostileFrames()["huge number in arguments"])
			var resp struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(bytes.TrimSpace(got), &resp), "%s", got)
			assert.Equal(t, mcp.INVALID_REQUEST, resp.Error.Code, "mcp-go's code for a request it cannot decode")
			assert.Equal(t, "invalid request: its params do not match the method's", resp.Error.Message)
			assert.Contains(t, logs.String(), "cannot unmarshal number 1e999999", "the decoder's text is the server's")
			assert.Contains(t, string(send(t, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"x":"a"}}}`)),
				`"text":"ok"`, "a well-formed call still runs")
		})
	}
}

// BenchmarkParseGuard is what the parse guard adds to a tools/call: the
// whole of MCPServer.HandleMessage with the adapter, and the guard's own
// decode alone (go test ./toolctx/mcpgo -run '^$' -bench ParseGuard).
func BenchmarkParseGuard(b *testing.B) {
	frame := json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"hello","n":[1,2,3],"o":{"k":"v"}}}}`)
	s := parseServer(slog.New(slog.DiscardHandler))
	s.HandleMessage(context.Background(), json.RawMessage(initFrame))
	b.Run("handle", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.HandleMessage(context.Background(), frame)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var base struct {
				Method mcp.MCPMethod `json:"method"`
			}
			_ = json.Unmarshal(frame, &base)
			var r mcp.CallToolRequest
			_ = json.Unmarshal(frame, &r)
		}
	})
}
