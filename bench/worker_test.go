package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mark3labs/mcp-go/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// pairedWorkerEnv names the arm a BenchmarkPairedWorker process serves,
// as "<case>/<arm>": sdk-in-memory, sdk-http, mcpgo-in-process or
// mcpgo-http; bare, own or toolmw.
const pairedWorkerEnv = "TOOLMW_PAIRED_WORKER"

// BenchmarkPairedWorker is one arm of bench/internal/paired: a long-lived
// process that sets up one server and its client, then runs bursts of
// calls when told to, so that the arms of a case, each in a process of its
// own, can alternate in short bursts without a process start (or a cold
// heap) per burst. It reads commands from file descriptor 3 and answers
// on descriptor 4 (see pairedServe); run without TOOLMW_PAIRED_WORKER it
// drives itself through one short burst of every arm of every case, a
// check that the workers bench/internal/paired starts can serve.
func BenchmarkPairedWorker(b *testing.B) {
	spec := os.Getenv(pairedWorkerEnv)
	if spec == "" {
		for _, cs := range []string{"sdk-in-memory", "sdk-http", "mcpgo-in-process", "mcpgo-http"} {
			for _, arm := range []string{"bare", "own", "toolmw"} {
				b.Run(cs+"/"+arm, func(b *testing.B) {
					call := pairedArm(b, cs, arm)
					in := strings.NewReader("run 3\nfor 1ms\nquit\n")
					var out strings.Builder
					if err := pairedServe(call, in, &out); err != nil {
						b.Fatal(err)
					}
					if got := strings.Count(out.String(), "cpu-ns="); got != 2 {
						b.Fatalf("%s/%s answered %d bursts of 2:\n%s", cs, arm, got, out.String())
					}
				})
			}
		}
		return
	}
	cs, arm, ok := strings.Cut(spec, "/")
	if !ok {
		b.Fatalf("%s=%q: want <case>/<arm>", pairedWorkerEnv, spec)
	}
	call := pairedArm(b, cs, arm)
	in, out := os.NewFile(3, "commands"), os.NewFile(4, "answers")
	if in == nil || out == nil {
		b.Fatal("BenchmarkPairedWorker: descriptors 3 and 4 are not open (run it through bench/internal/paired)")
	}
	defer in.Close()
	defer out.Close()
	if err := pairedServe(call, in, out); err != nil {
		b.Fatal(err)
	}
}

// pairedArm sets up one arm of one case and returns one call through it.
func pairedArm(b *testing.B, cs, arm string) func() {
	way := map[string]string{"bare": wayBare, "toolmw": wayToolmw}[arm]
	if arm == "own" {
		way = waySDKMW
		if strings.HasPrefix(cs, "mcpgo") {
			way = wayMCPGoMW
		}
	}
	if way == "" {
		b.Fatalf("paired worker: no arm %q (bare, own, toolmw)", arm)
	}
	switch cs {
	case "sdk-in-memory", "sdk-http":
		tr := toolctx.TransportInMemory
		if cs == "sdk-http" {
			tr = toolctx.TransportStreamableHTTP
		}
		s := sdkServer(b, way, tr)
		cs0 := sdkHTTP1(b, s, cs == "sdk-http")
		p := echoParams()
		return func() { sdkCall(b, cs0, p) }
	case "mcpgo-in-process", "mcpgo-http":
		s := mcpgoServer(b, way, mcpgoEcho)
		var c *client.Client
		if cs == "mcpgo-http" {
			c = mcpgoHTTP(b, s, 1)[0]
		} else {
			c = mcpgoInProcess(b, s)
		}
		req := mcpgoRequest(map[string]any{"q": "hello"})
		return func() { mcpgoCall(b, c, req) }
	}
	b.Fatalf("paired worker: no case %q", cs)
	return nil
}

// pairedServe answers the commands of bench/internal/paired, one a line:
//
//	run N   N calls, then a forced collection; answers
//	        "cpu-ns=C gc-ns=G wall-ns=W alloc-B=A": the process's CPU time
//	        (every thread) over the calls, the CPU time of the collection
//	        after them, the wall time of the calls, and the bytes they
//	        allocated
//	for D   calls until D (a time.Duration) has passed, then the same
//	        collection; answers the same with "calls=K " in front
//	quit    (or the end of the input) returns
//
// The collection after a burst (and one before the first) means each
// burst starts from the same heap, none inherits another's garbage, and (with GOGC=off and a
// memory limit above what a burst allocates) no collection falls inside
// one: a collection's cost follows the live heap, not the burst, and one
// falling into some bursts and not others is most of their spread. The
// collection after the burst is timed on its own (gc-ns).
func pairedServe(call func(), in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	first := true
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		switch cmd {
		case "quit":
			return nil
		case "run", "for":
		default:
			return fmt.Errorf("paired worker: unknown command %q", sc.Text())
		}
		n, err := strconv.Atoi(arg)
		d, derr := time.ParseDuration(arg)
		switch {
		case cmd == "run" && (err != nil || n < 1):
			return fmt.Errorf("paired worker: run %q: want a count of calls ≥ 1", arg)
		case cmd == "for" && (derr != nil || d <= 0):
			return fmt.Errorf("paired worker: for %q: want a duration > 0", arg)
		}
		if first {
			runtime.GC()
			first = false
		}
		metrics.Read(allocs)
		a0 := allocs[0].Value.Uint64()
		c0, w0 := processCPU(), time.Now()
		if cmd == "run" {
			for range n {
				call()
			}
		} else {
			for n = 0; n == 0 || time.Since(w0) < d; n++ {
				call()
			}
		}
		wall := time.Since(w0)
		metrics.Read(allocs)
		c1 := processCPU()
		runtime.GC()
		c2 := processCPU()
		if cmd == "for" {
			if _, err := fmt.Fprintf(out, "calls=%d ", n); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(out, "cpu-ns=%d gc-ns=%d wall-ns=%d alloc-B=%d\n",
			c1-c0, c2-c1, wall.Nanoseconds(), allocs[0].Value.Uint64()-a0); err != nil {
			return err
		}
	}
	return sc.Err()
}

// sdkHTTP1 connects one client session to s: over streamable HTTP on
// loopback when overHTTP, else in memory.
func sdkHTTP1(b *testing.B, s *mcp.Server, overHTTP bool) *mcp.ClientSession {
	if overHTTP {
		return sdkHTTP(b, s, 1)[0]
	}
	return sdkInMemory(b, s)
}

// processCPU is the process's CPU time, every thread, to the nanosecond
// (clock_gettime CLOCK_PROCESS_CPUTIME_ID: the scheduler's own count,
// where getrusage's is rounded to microseconds).
func processCPU() int64 {
	const clockProcessCPUTimeID = 2
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return cpuTime().Nanoseconds()
	}
	return ts.Nano()
}
