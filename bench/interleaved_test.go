package bench

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// interleavedWays are the servers of one SDK's BenchmarkInterleaved cases,
// in the order of their metrics: two identical bare servers (the second is
// the A/A control: whatever separates it from the first is the harness's
// own noise, and the ratios are taken to the mean of the two), the SDK's
// own middleware (go-sdk: a receiving middleware that recovers and writes
// one slog line per method, synchronously; mcp-go: WithRecovery and
// WithLogger, two slog lines per tool call, synchronously), toolmw's full
// chain with its audit rows to an async writer into a slog sink (the line
// is formatted on the writer's goroutine, off the call), and the same chain
// with each row written by slog on the call (audit.Direct into a SlogSink:
// one line per call, synchronously, like for like with the own-middleware
// arm). Every slog handler is a text handler into io.Discard.
var interleavedWays = []struct{ metric, sdk, mcpgo string }{
	{"bare-ns", wayBare, wayBare},
	{"bare2-ns", wayBare, wayBare},
	{"own-ns", waySDKMW, wayMCPGoMW},
	{"toolmw-ns", wayToolmw, wayToolmw},
	{"toolmw-syncslog-ns", wayToolmwSync, wayToolmwSync},
}

// arm is one server of an interleaved case: op makes calls calls to it
// and returns when they are all answered; metric names its mean wall time
// per call.
type arm struct {
	metric string
	calls  int
	op     func()
}

// BenchmarkInterleaved calls the servers of one case in a new random order
// in every round of the same loop, so that whatever else the machine does,
// and the garbage collector's cycles (one heap for all of them), fall on
// all of them alike and never in step with one. Each op is one round: every
// arm's calls, one arm at a time. It reports each arm's mean wall time per
// call as <arm>-ns. bench/run runs it many times and reports the ratios per
// count with a confidence interval; the bare2/bare ratio shows how far
// apart two identical servers measure.
//
// The cases:
//
//   - sdk-in-memory, sdk-http, mcpgo-in-process, mcpgo-http: one call per
//     arm per round, one session each; arms bare, bare2, own, toolmw,
//     toolmw-syncslog (see interleavedWays).
//   - sdk-http-sessions=8, mcpgo-http-sessions=8: the same arms over
//     streamable HTTP with eight sessions each; an arm's turn is one call on
//     each of its eight sessions at once, and <arm>-ns is the turn's wall
//     time divided by eight (one over the throughput at eight calls in
//     flight).
//   - demo-http-sessions=8: the demo server's own stack (examples/server's
//     tools, chain, HTTP middleware and SQLite audit store with its spool,
//     as built by packages examples/server/stack and serve: see demoServer) against a bare go-sdk
//     server with the same greet tool registered with mcp.AddTool and the
//     SDK's streamable HTTP handler with default options; eight sessions
//     each as above. Arms bare-ns, bare2-ns and demo-ns.
func BenchmarkInterleaved(b *testing.B) {
	b.Run("sdk-in-memory", func(b *testing.B) {
		arms := make([]arm, len(interleavedWays))
		for i, w := range interleavedWays {
			cs := sdkInMemory(b, sdkServer(b, w.sdk, toolctx.TransportInMemory))
			p := echoParams()
			arms[i] = arm{w.metric, 1, func() { sdkCall(b, cs, p) }}
		}
		interleave(b, arms)
	})
	b.Run("sdk-http", func(b *testing.B) {
		arms := make([]arm, len(interleavedWays))
		for i, w := range interleavedWays {
			cs := sdkHTTP(b, sdkServer(b, w.sdk, toolctx.TransportStreamableHTTP), 1)[0]
			p := echoParams()
			arms[i] = arm{w.metric, 1, func() { sdkCall(b, cs, p) }}
		}
		interleave(b, arms)
	})
	b.Run("mcpgo-in-process", func(b *testing.B) {
		arms := make([]arm, len(interleavedWays))
		for i, w := range interleavedWays {
			c := mcpgoInProcess(b, mcpgoServer(b, w.mcpgo, mcpgoEcho))
			arms[i] = arm{w.metric, 1, func() { mcpgoCall(b, c, mcpgoRequest(map[string]any{"q": "hello"})) }}
		}
		interleave(b, arms)
	})
	b.Run("mcpgo-http", func(b *testing.B) {
		arms := make([]arm, len(interleavedWays))
		for i, w := range interleavedWays {
			c := mcpgoHTTP(b, mcpgoServer(b, w.mcpgo, mcpgoEcho), 1)[0]
			arms[i] = arm{w.metric, 1, func() { mcpgoCall(b, c, mcpgoRequest(map[string]any{"q": "hello"})) }}
		}
		interleave(b, arms)
	})
	const sessions = 8
	b.Run("sdk-http-sessions=8", func(b *testing.B) {
		arms := make([]arm, len(interleavedWays))
		for i, w := range interleavedWays {
			arms[i] = arm{w.metric, sessions, sdkFanOut(b, sdkHTTP(b, sdkServer(b, w.sdk, toolctx.TransportStreamableHTTP), sessions), echoParams)}
		}
		interleave(b, arms)
	})
	b.Run("mcpgo-http-sessions=8", func(b *testing.B) {
		arms := make([]arm, len(interleavedWays))
		for i, w := range interleavedWays {
			arms[i] = arm{w.metric, sessions, mcpgoFanOut(b, mcpgoHTTP(b, mcpgoServer(b, w.mcpgo, mcpgoEcho), sessions))}
		}
		interleave(b, arms)
	})
	b.Run("demo-http-sessions=8", func(b *testing.B) { benchDemo(b, sessions) })
}

// sdkFanOut returns an op that makes one call on each of css at once and
// waits for all of them. Each session has its own params (see echoParams).
func sdkFanOut(b *testing.B, css []*mcp.ClientSession, params func() *mcp.CallToolParams) func() {
	ps := make([]*mcp.CallToolParams, len(css))
	for i := range ps {
		ps[i] = params()
	}
	return fanOut(b, len(css), func(i int) error { return sdkTry(css[i], ps[i]) })
}

// mcpgoFanOut is sdkFanOut for mcp-go clients.
func mcpgoFanOut(b *testing.B, cs []*client.Client) func() {
	return fanOut(b, len(cs), func(i int) error { return mcpgoTry(cs[i], mcpgoRequest(map[string]any{"q": "hello"})) })
}

// fanOut returns an op that runs call(0) to call(n-1) on goroutines of
// their own and returns when all have; a call's error fails the benchmark.
func fanOut(b *testing.B, n int, call func(i int) error) func() {
	return func() {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := call(i); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
}

func interleave(b *testing.B, arms []arm) {
	for _, a := range arms {
		a.op() // warm up
	}
	// A fixed seed: the same sequence of orders in every count.
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, len(arms))
	for i := range order {
		order[i] = i
	}
	total := make([]time.Duration, len(arms))
	b.ReportAllocs()
	b.ResetTimer()
	rounds := 0
	for b.Loop() {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, j := range order {
			start := time.Now()
			arms[j].op()
			total[j] += time.Since(start)
		}
		rounds++
	}
	b.StopTimer()
	for j, a := range arms {
		b.ReportMetric(float64(total[j].Nanoseconds())/float64(rounds*a.calls), a.metric)
	}
}
