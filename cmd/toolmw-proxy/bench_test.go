package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/internal/syncbuf"
)

// BenchmarkCall measures one tools/call (the leaky upstream's echo, a few
// bytes each way) from a go-sdk client: straight to the upstream, and
// through the proxy (its whole chain, the SQLite audit row included), over
// stdio (real OS pipes; the upstream is a process) and over streamable
// HTTP on loopback (the proxy's upstream is then the same HTTP server, by
// URL). The proxy runs in the benchmark's process, so cpu-µs/op is the
// client's CPU directly, and the client's plus the proxy's through it: the
// difference is the proxy's CPU per call (the upstream's, in its own
// process, is in neither). p50-µs and p99-µs are the calls' latencies.
//
//	go test -run '^$' -bench BenchmarkCall -benchtime 2000x -count 5 ./cmd/toolmw-proxy/
//
// The target, from one extra JSON-RPC hop: a direct call is one hop (the
// client encodes, one pipe or loopback round trip, the server decodes,
// answers, encodes, the client decodes); the proxy adds one of each, a
// server side and a client side, plus its chain. So the added latency
// should be at most about the direct call's own (1x its p50), and the
// added CPU at most about the client's plus the upstream server's share of
// a direct call (2x the direct client's cpu-µs/op: the two sides cost
// about the same).
//
// Measured at 4f35df1 (medians of 5 runs of 2000 calls, 2 cores shared
// with other builds: load average 18-21, so p99 is the machine's, not the
// proxy's):
//
//	                p50 µs  p99 µs  cpu-µs/op  B/op     allocs/op
//	stdio direct    312     9974    296        139,665  64
//	stdio proxy     691     18500   863        529,281  322
//	  added         +379    +8526   +567
//	http  direct    464     7568    395        143,744  124
//	http  proxy     1059    19014   1016       499,807  515
//	  added         +595    +11446  +621
//
// Added latency 1.2x (stdio) and 1.3x (HTTP) the direct p50, a little over
// the 1x target: the rest is the chain (the audit row's queueing and the
// SQLite writer run in the proxy's process) on a machine this loaded.
// Added CPU 1.9x and 1.6x the direct client's, within the 2x target.
func BenchmarkCall(b *testing.B) {
	b.Run("stdio/direct", func(b *testing.B) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roleEnv+"="+roleLeaky)
		benchCalls(b, connect(b, &mcp.CommandTransport{Command: cmd}))
	})
	b.Run("stdio/proxy", func(b *testing.B) {
		benchCalls(b, connectStdioProxy(b, "-config", leakyConfig(b, ""), "--", os.Args[0]))
	})
	b.Run("http/direct", func(b *testing.B) {
		benchCalls(b, connect(b, &mcp.StreamableClientTransport{Endpoint: startLeakyHTTP(b), HTTPClient: &http.Client{}}))
	})
	b.Run("http/proxy", func(b *testing.B) {
		url, _ := startHTTPProxy(b, "-upstream", startLeakyHTTP(b))
		benchCalls(b, connect(b, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{}}))
	})
}

func connect(b *testing.B, t mcp.Transport) *mcp.ClientSession {
	b.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// connectStdioProxy runs the proxy on OS pipes (as a client that starts it
// over stdio would) and connects to it.
func connectStdioProxy(b *testing.B, args ...string) *mcp.ClientSession {
	b.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	stderr := &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), append([]string{"-stdio", "-audit-db", filepath.Join(b.TempDir(), "audit.db")}, args...), inR, outW, stderr)
		_ = outW.Close()
	}()
	cs := connect(b, &mcp.IOTransport{Reader: outR, Writer: inW})
	b.Cleanup(func() {
		_ = cs.Close()
		_ = inW.Close()
		select {
		case <-done:
		case <-time.After(time.Minute):
			b.Errorf("the proxy did not exit:\n%s", stderr)
		}
		_ = inR.Close()
		_ = outR.Close()
	})
	return cs
}

// startLeakyHTTP runs the leaky upstream on streamable HTTP and returns its
// endpoint.
func startLeakyHTTP(b testing.TB) string {
	return startLeakyURL(b, roleLeakyHTTP)
}

// startLeakyURL runs the leaky upstream in role (roleLeakyHTTP or
// roleLeakySSE) and returns its endpoint.
func startLeakyURL(b testing.TB, role string) string {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("the leaky HTTP upstream did not say its address: %v", err)
	}
	return line[:len(line)-1]
}

// benchCalls calls echo b.N times, one at a time, and reports the
// latencies' p50 and p99 and the process's CPU per call.
func benchCalls(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"q": "hello"}}
	for range 50 { // warm up: connections, the SQLite writer, caches
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		lat = append(lat, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %v", err, res)
		}
	}
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// cpuTime is the process's user and system CPU so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
