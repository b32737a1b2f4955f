package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpsdktest"
)

// serveEnv makes the test binary the server under test: "kit" serves the
// loop as main does, "bare" the same loop answering without the chain and
// the kit.
const serveEnv = "TOOLMW_EXAMPLE_ADAPTER_SERVE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serveEnv); mode != "" {
		os.Exit(serveForKit(mode))
	}
	goleak.VerifyTestMain(m)
}

// serveForKit serves the demo tools, toolmwtest's failing tools (as the
// kit's runner asks through toolmwtest.FailuresEnv) and its alive tool
// on stdin and stdout.
func serveForKit(mode string) int {
	fs, err := toolmwtest.FailuresFromEnv(toolmwtest.Generate)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	tools := append(demoTools(), tool{Name: toolmwtest.AliveTool, InputSchema: json.RawMessage(`{"type":"object"}`),
		handler: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })})
	for i, f := range fs {
		tools = append(tools, tool{Name: toolmwtest.ToolName(i), Description: "fails as " + f.Shape, InputSchema: json.RawMessage(`{"type":"object"}`),
			handler: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.ErrorResult(f.Call()) })})
	}
	s := newServer(demoChain(discard()), tools, WithQuietFallback())
	if mode == "bare" {
		s.call = s.bare
	}
	if err := s.serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		return 1
	}
	return 0
}

// bare answers a tools/call as the SDKs do without toolmw: the tool runs
// without the chain, and its error's text (or its panic's value) is what
// the client reads.
func (s *server) bare(ctx context.Context, p callParams) (rp reply) {
	defer func() {
		if v := recover(); v != nil {
			rp = result(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": fmt.Sprint(v)}}})
		}
	}()
	res := s.dispatch(ctx, &toolctx.Request{Tool: p.Name, Arguments: toolctx.RawArguments(p.Arguments)})
	if cause := res.Cause(); cause != nil {
		return result(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": cause.Error()}}})
	}
	return result(map[string]any{"isError": res.IsError, "content": content(res.Content)})
}

func selfAs(mode string) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), serveEnv+"="+mode)
		cmd.Stderr = io.Discard
		return cmd
	}
}

// TestKitFindsNothing runs toolmwtest's hostile failures, and the demo
// tools with arguments made from their schemas, over the loop's stdio with
// go-sdk's client: no canary, stack or path reaches the client, and every
// call is answered.
func TestKitFindsNothing(t *testing.T) {
	res := mcpsdktest.Kit().Run(t, mcpsdktest.Config{
		Plan: toolmwtest.Plan{Transports: []toolmwtest.Transport{toolmwtest.Command("example adapter", selfAs("kit"))}, Count: 60, CallTimeout: 30 * time.Second},
	})
	require.Greater(t, res.Calls, 60, "every failing tool and the demo tools were called")
}

// TestKitCatchesTheLeakWithoutTheChain: the same loop answering without
// the chain and the kit sends raw causes, and the kit says so.
func TestKitCatchesTheLeakWithoutTheChain(t *testing.T) {
	res, err := mcpsdktest.Kit().Check(context.Background(), mcpsdktest.Config{
		Plan: toolmwtest.Plan{Transports: []toolmwtest.Transport{toolmwtest.Command("example adapter, bare", selfAs("bare"))}, Count: 20, CallTimeout: 30 * time.Second},
	})
	require.NoError(t, err)
	leaks := 0
	for _, p := range res.Problems {
		if p.Finding.Match != "" {
			leaks++
		}
	}
	require.NotZero(t, leaks, "the kit finds the leaks: %s", res)
}

// TestLoop speaks the protocol by hand: the handshake, the list, a call
// that succeeds, a raw failure the client gets scrubbed, an unknown tool,
// and what the kit's frame guard answers before the loop reads it: a line
// that is not JSON, params of the wrong shape, a batch on a session of
// protocol 2025-06-18 (the guard's fixed messages, not the loop's).
func TestLoop(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"server/discover"}
{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":3,"method":"tools/list"}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"lookup"}}
{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}
not json
{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":5}}
[{"jsonrpc":"2.0","id":9,"method":"ping"}]
`
	r, w := io.Pipe()
	s := newServer(demoChain(discard()), demoTools(), WithQuietFallback())
	done := make(chan error, 1)
	go func() { done <- s.serve(context.Background(), strings.NewReader(in), w); _ = w.Close() }()
	dec := json.NewDecoder(r)
	var got []map[string]any
	for {
		var m map[string]any
		if dec.Decode(&m) != nil {
			break
		}
		got = append(got, m)
	}
	require.NoError(t, <-done)
	require.Len(t, got, 9, "one answer per request, none for the notification")
	require.EqualValues(t, -32601, got[0]["error"].(map[string]any)["code"], "server/discover: method not found")
	require.Equal(t, "2025-06-18", got[1]["result"].(map[string]any)["protocolVersion"])
	require.Len(t, got[2]["result"].(map[string]any)["tools"], 2)
	echo := got[3]["result"].(map[string]any)
	require.Equal(t, false, echo["isError"])
	require.Equal(t, `"hi"`, echo["content"].([]any)[0].(map[string]any)["text"])
	fail := got[4]["result"].(map[string]any)
	require.Equal(t, true, fail["isError"])
	require.Equal(t, errs.GenericMessage, fail["content"].([]any)[0].(map[string]any)["text"])
	require.NotContains(t, fmt.Sprint(fail), "password", "the raw cause stays on the server")
	require.Equal(t, map[string]any{"code": "internal"}, fail["_meta"].(map[string]any)[toolctx.ErrorMetaKey])
	require.EqualValues(t, -32602, got[5]["error"].(map[string]any)["code"], "an unknown tool is a protocol error")
	require.Equal(t, map[string]any{"code": -32700.0, "message": adapter.MsgFrameParse}, got[6]["error"])
	require.Equal(t, map[string]any{"code": -32602.0, "message": adapter.MsgFrameParams}, got[7]["error"])
	require.EqualValues(t, 8, got[7]["id"])
	require.Equal(t, map[string]any{"code": -32600.0, "message": adapter.MsgFrameBatch}, got[8]["error"])
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// WithQuietFallback sends the kit's fallback reports nowhere (the tests'
// failures panic and Goexit on purpose).
func WithQuietFallback() adapter.Option { return adapter.WithFallbackLogger(discard()) }
