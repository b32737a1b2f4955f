package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
)

// The client is run against the demo server by examples/server's TestTour;
// this checks how it renders what it received.
func TestDescribe(t *testing.T) {
	ok := &mcp.CallToolResult{StructuredContent: map[string]any{"greeting": "hi"}}
	assert.Equal(t, `ok {"greeting":"hi"}`, Describe(ok, nil, false))

	fail := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: "order 42 does not exist"}},
		Meta:    mcp.Meta{toolctx.ErrorMetaKey: map[string]any{"code": "not_found", "detail": map[string]any{"id": 42}}},
	}
	assert.Equal(t, `isError "order 42 does not exist" code=not_found detail={"id":42}`, Describe(fail, nil, false))
	assert.Equal(t, "protocol error: boom", Describe(nil, errors.New("boom\nsecond line"), false))
	assert.Contains(t, Describe(nil, context.DeadlineExceeded, true), "cancelled by the client")
}

func TestUnreachable(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-url", "http://127.0.0.1:1/mcp", "-timeout", "5s"}, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "go run ./examples/server")
	assert.Equal(t, 2, run(context.Background(), []string{"-nope"}, &out, &errb))
}

// serverEnv makes the test binary a stdio MCP server for TestStdio.
const serverEnv = "TOOLMW_CLIENT_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		if err := testServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testServer serves greet, the first call of the tour; the others are
// unknown tools to it, which the client reports as protocol errors.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "client-test", Version: "0"}, nil)
	type in struct {
		Name string `json:"name"`
	}
	type out struct {
		Greeting string `json:"greeting"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
		return nil, out{Greeting: "Hello, " + a.Name + "."}, nil
	})
	return s
}

func checkTour(t *testing.T, got, target string) {
	t.Helper()
	assert.True(t, strings.HasPrefix(got, "connected to "+target+"; tools: greet\n"), "the first line names the server: %s", got)
	assert.Contains(t, got, "greet {\"name\":\"Ada\"}\n  (success: typed input and structured output)\n  -> ok {\"greeting\":\"Hello, Ada.\"}\n")
	assert.Contains(t, got, "  -> protocol error: calling \"tools/call\": unknown tool \"no_such_tool\"\n")
	assert.Equal(t, len(Tour), strings.Count(got, "\n  -> "), "every call of the tour is made and described")
}

// TestStdio runs the client with -stdio against this test binary as a
// stdio server, passing its stderr through.
func TestStdio(t *testing.T) {
	t.Setenv(serverEnv, "1")
	exe, err := os.Executable()
	require.NoError(t, err)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-stdio", exe + " -test.run=^$", "-timeout", "2m"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	checkTour(t, out.String(), "stdio: "+exe+" -test.run=^$")
}

// TestSSE runs the client with -sse against an HTTP+SSE server on
// 127.0.0.1.
func TestSSE(t *testing.T) {
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return testServer() }, nil))
	defer srv.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-sse", srv.URL, "-timeout", "2m"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	checkTour(t, out.String(), srv.URL)
}

func TestTransportFlags(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-sse", "http://127.0.0.1:1/sse", "-url", "http://127.0.0.1:1/mcp"}, &out, &errb))
	assert.Contains(t, errb.String(), "pass one of -url, -sse and -stdio")
	errb.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"-stdio", " "}, &out, &errb))
	assert.Contains(t, errb.String(), "-stdio needs a command")
	errb.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"-stdio", "go", "run"}, &out, &errb))
	assert.Contains(t, errb.String(), `unexpected argument "run"`)
	errb.Reset()
	// A closed port on 127.0.0.1: the hint names the /sse endpoint.
	assert.Equal(t, 1, run(context.Background(), []string{"-sse", "http://127.0.0.1:1/sse", "-timeout", "30s"}, &out, &errb))
	assert.Contains(t, errb.String(), "cannot connect to http://127.0.0.1:1/sse")
	assert.Empty(t, out.String(), "nothing on stdout when it cannot connect")
}
