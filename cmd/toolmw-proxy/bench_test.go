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
//	go test -run '^$' -bench BenchmarkCall -benchtime 2000x ./cmd/toolmw-proxy/
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
	stderr := &syncBuffer{}
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
