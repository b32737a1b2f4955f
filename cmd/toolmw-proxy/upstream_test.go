package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// The test binary is also the processes the tests start: the proxy itself
// (roleProxy, for the kit, which runs a binary over stdio) and the leaky
// upstream (roleLeaky over stdio, roleLeakyHTTP on 127.0.0.1), chosen by
// roleEnv.
const (
	roleEnv        = "TOOLMW_PROXY_TEST_ROLE"
	roleProxy      = "proxy"
	roleLeaky      = "leaky"
	roleLeakyHTTP  = "leaky-http"
	roleLeakySSE   = "leaky-sse"
	roleAsker      = "asker"       // route_test.go, over stdio
	roleAskerHTTP  = "asker-http"  // route_test.go, on streamable HTTP
	roleMRTR       = "mrtr"        // mrtr_test.go, over stdio
	roleMRTRHTTP   = "mrtr-http"   // mrtr_test.go, on streamable HTTP
	roleBridge     = "bridge"      // bridge_test.go, over stdio
	roleBridgeHTTP = "bridge-http" // bridge_test.go, on streamable HTTP
)

// The leaky upstream's secrets: canary is in every raw error it returns;
// envSecret is in the proxy's environment (as a DSN or a token would be),
// and the upstream's env tool prints its whole environment.
const (
	canary       = "TOOLMW-PROXY-CANARY-7f3a"
	envSecretVar = "TOOLMW_PROXY_TEST_SECRET"
	envSecret    = "TOOLMW-PROXY-ENV-SECRET-91c2"
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case roleProxy:
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	case roleLeaky:
		// The stdio transport with one change on the way out: the answer
		// of bad_result, made unreadable (see unreadableMarker).
		t := &mcp.IOTransport{Reader: os.Stdin, Writer: unreadableWriter{os.Stdout}}
		if err := leakyServer().Run(context.Background(), t); err != nil {
			fmt.Fprintln(os.Stderr, "leaky upstream:", err)
		}
		os.Exit(0)
	case roleAsker:
		if err := askerServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "asker upstream:", err)
		}
		os.Exit(0)
	case roleMRTR:
		if err := mrtrServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "mrtr upstream:", err)
		}
		os.Exit(0)
	case roleBridge:
		if err := bridgeServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "bridge upstream:", err)
		}
		os.Exit(0)
	case roleLeakyHTTP, roleLeakySSE, roleAskerHTTP, roleMRTRHTTP, roleBridgeHTTP:
		s := leakyServer()
		switch os.Getenv(roleEnv) {
		case roleAskerHTTP:
			s = askerServer()
		case roleBridgeHTTP:
			s = bridgeServer()
		case roleMRTRHTTP:
			s = mrtrServer()
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "leaky upstream:", err)
			os.Exit(1)
		}
		// go-sdk serves 2026-07-28 on streamable HTTP only stateless.
		var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: os.Getenv(roleEnv) == roleMRTRHTTP})
		if os.Getenv(roleEnv) == roleLeakySSE {
			h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}
		fmt.Println("http://" + ln.Addr().String() + "/mcp")
		_ = http.Serve(ln, h)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// leakyServer is an MCP server written with go-sdk and no toolmw: its raw
// handlers' errors reach its clients as JSON-RPC errors with their raw
// text, and it does none of what the proxy adds.
func leakyServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "leaky", Version: "1.0.0"}, nil)
	object := json.RawMessage(`{"type":"object"}`)
	add := func(name, desc string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: object}, h)
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add("echo", "Echoes its arguments.", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(string(req.Params.Arguments)), nil
	})
	add("raw_error", "Fails with a raw Go error (a JSON-RPC error with code 0 and its text).", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("dial postgres://app:%s@10.0.0.7:5432/orders: connection refused", canary)
	})
	add("jsonrpc_error", "Fails with a JSON-RPC error whose message and data are raw.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "panic: " + canary,
			Data: json.RawMessage(`{"stack":"goroutine 1 [running]:\nmain.go:12","secret":"` + canary + `"}`)}
	})
	add("invalid_params", "Fails with a JSON-RPC invalid-params error whose message is raw.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "decode at /srv/app/handler.go:88: " + canary}
	})
	add("feedback", "Answers with its own isError result: tool feedback, public.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := text("no such order")
		res.IsError = true
		return res, nil
	})
	add("env", "Prints its environment, as tools that show their configuration do.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		env := os.Environ()
		sort.Strings(env)
		return text(strings.Join(env, "\n")), nil
	})
	add("pid", "Answers its process id.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	})
	add("progress", "Sends three progress notifications, then answers.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := req.Params.GetProgressToken()
		for i := range 3 {
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: 3})
			}
		}
		return text("done"), nil
	})
	add("hang", "Says it started (a progress notification), then never answers, whatever its context says.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "started"})
		}
		select {}
	})
	add("crash", "Panics: go-sdk does not recover it, so the process dies with its stack on stderr.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("crash: " + canary)
	})
	add("garbage", "Writes a line that is not JSON-RPC to stdout, then never answers.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stdout, "Server listening... "+canary)
		select {}
	})
	add("bad_result", "Answers a result its clients cannot read (a content block of an unknown type), over stdio only.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(unreadableMarker), nil
	})
	add("secret_feedback", "Answers isError feedback that holds a connection string.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := text("cannot reach postgres://app:hunter2@db.internal:5432/orders")
		res.IsError = true
		return res, nil
	})
	add("add_tool", "Adds the tool added_later: the server tells its clients its tool list changed.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.AddTool(&mcp.Tool{Name: "added_later", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("added later"), nil
		})
		return text("added"), nil
	})
	add("wait_cancel", "Waits for its cancellation, then writes the file cancelled in $"+dirEnv+".", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "waiting"})
		}
		<-ctx.Done()
		if dir := os.Getenv(dirEnv); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "cancelled"), []byte(context.Cause(ctx).Error()), 0o600)
		}
		return nil, ctx.Err()
	})
	return s
}

// unreadableMarker is the text of bad_result's answer, which
// unreadableWriter turns into a content block of a type no client knows.
const unreadableMarker = "TOOLMW-PROXY-UNREADABLE"

// unreadableWriter is the leaky upstream's stdout: go-sdk writes each
// message in one Write, so the marker's block is whole in it.
type unreadableWriter struct{ w *os.File }

func (u unreadableWriter) Write(p []byte) (int, error) {
	q := bytes.ReplaceAll(p, []byte(`{"type":"text","text":"`+unreadableMarker+`"}`),
		[]byte(`{"type":"hologram","text":"`+canary+`"}`))
	if _, err := u.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (u unreadableWriter) Close() error { return u.w.Close() }

// dirEnv names the directory where the leaky upstream's wait_cancel tool
// says it was cancelled.
const dirEnv = "TOOLMW_PROXY_TEST_DIR"

// TestLeakyUpstreamLeaks shows the leaky upstream does leak, called
// directly: the canary reaches its client. Without this, the proxy's
// tests would prove nothing.
func TestLeakyUpstreamLeaks(t *testing.T) {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := leakyServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, tool := range []string{"raw_error", "jsonrpc_error", "invalid_params"} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		if err == nil || !strings.Contains(err.Error(), canary) {
			t.Errorf("%s called directly: want an error with the canary, got %v", tool, err)
		}
	}
}
