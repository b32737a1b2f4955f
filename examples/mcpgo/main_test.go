package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/internal/syncbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// checkClient checks what mcp-go's client got for every call.
func checkClient(t *testing.T, got string) {
	t.Helper()
	for _, want := range []string{
		`client got: ok {"id":1,"status":"shipped"}`,
		`client got: isError "order 42 does not exist" {"code":"not_found","detail":{"id":42}}`,
		`client got: isError "invalid arguments: id: expected a number, got a string"`,
		`client got: isError "the tool call timed out after 100ms" {"code":"timeout"}`,
		`client got: protocol error: `,
	} {
		assert.Contains(t, got, want)
	}
	assert.Equal(t, 2, strings.Count(got, `isError "internal error: the tool failed; the cause was recorded on the server" {"code":"internal"}`),
		"the panic and the raw error, scrubbed:\n%s", got)
	for _, secret := range []string{"hunter2", FakeDSN, "cursed", "goroutine "} {
		assert.NotContains(t, got, secret, "never reaches the client")
	}
}

// checkRows checks the audit rows and diagnostics a server wrote to its log.
func checkRows(t *testing.T, log, transport string) {
	t.Helper()
	for _, want := range []string{
		`transport=` + transport + ` tool=lookup_order outcome=error code=not_found`,
		`transport=` + transport + ` tool=lookup_order outcome=panic code=internal message="panic: order 13 is cursed"`,
		`transport=` + transport + ` tool=sales_report outcome=error code=internal message="dial ` + FakeDSN,
		`transport=` + transport + ` tool=lookup_order outcome=rejected code=invalid_arguments message="invalid arguments: id: expected a number, got a string" detail="map[problems:[map[expected:number got:string path:id rule:type]]]"`,
		`transport=` + transport + ` tool=no_such_tool outcome=rejected code=unknown_tool`,
		`msg="tool call failed" code=internal err="dial ` + FakeDSN,
	} {
		assert.Contains(t, log, want)
	}
}

// -tour: the server and mcp-go's in-process client in one process.
func TestTour(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"-tour"}, strings.NewReader(""), &out, &errb), errb.String())
	got := out.String()
	var client []string
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "client got:") {
			client = append(client, line)
		}
	}
	checkClient(t, strings.Join(client, "\n"))
	for _, want := range []string{
		`audit row: outcome=error code=not_found message="order 42 does not exist"`,
		`audit row: outcome=panic code=internal message="panic: order 13 is cursed"`,
		`audit row: outcome=error code=internal message="dial ` + FakeDSN,
	} {
		assert.Contains(t, got, want)
	}
}

var urlRE = regexp.MustCompile(`at (http://\S+)`)

// Served over streamable HTTP and SSE, called with mcp-go's own client for
// each (the -client mode, as the README shows it).
func TestHTTPTransports(t *testing.T) {
	for _, tc := range []struct {
		name, transport string
		flags           []string
	}{
		{"streamable HTTP", "streamable-http", nil},
		{"SSE", "sse", []string{"-sse"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, tc.flags...), strings.NewReader(""), stdout, stderr)
			}()
			var url string
			for deadline := time.Now().Add(15 * time.Second); url == "" && time.Now().Before(deadline); {
				if m := urlRE.FindStringSubmatch(stdout.String()); m != nil && strings.Contains(stdout.String(), "Ctrl-C") {
					url = m[1]
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.NotEmpty(t, url, "the banner: %s %s", stdout, stderr)
			assert.Contains(t, stdout.String(), "go run ./examples/mcpgo"+strings.Join(append([]string{""}, tc.flags...), " ")+" -client "+url)

			var out, errb bytes.Buffer
			args := append([]string{"-client", url}, tc.flags...)
			require.Equal(t, 0, run(context.Background(), args, strings.NewReader(""), &out, &errb), errb.String())
			checkClient(t, out.String())

			cancel()
			select {
			case code := <-done:
				assert.Equal(t, 0, code, stderr.String())
			case <-time.After(20 * time.Second):
				t.Fatal("the server did not stop")
			}
			checkRows(t, stderr.String(), tc.transport)
		})
	}
}

// Served over stdio, called with mcp-go's client on the other end of the
// pipes; the server ends when its stdin closes.
func TestStdio(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), []string{"-stdio"}, inR, outW, stderr)
		_ = outW.Close()
		done <- code
	}()
	c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))))
	var out bytes.Buffer
	require.NoError(t, callAll(context.Background(), c, &out)) // closes the client, then stdin
	_ = inW.Close()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("the stdio server did not stop when its stdin closed")
	}
	checkClient(t, out.String())
	checkRows(t, stderr.String(), "stdio")
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-stdio", "-sse"}, {"-tour", "-client", "http://127.0.0.1:1/mcp"}, {"-port", "1"}, {"extra"}} {
		var errb bytes.Buffer
		assert.Equal(t, 2, run(context.Background(), args, strings.NewReader(""), io.Discard, &errb), "%v", args)
		assert.Contains(t, errb.String(), "-h", "%v: says how to list the flags", args)
	}
	var errb bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"-h"}, strings.NewReader(""), io.Discard, &errb))
	for _, f := range []string{"-addr", "-stdio", "-sse", "-client", "-tour"} {
		assert.Contains(t, errb.String(), f)
	}
}
