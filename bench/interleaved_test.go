package bench

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/toolmw/toolmw/toolctx"
)

// interleavedWays are the servers of one BenchmarkInterleaved case, in the
// order of their metrics: two identical bare servers (the second is the
// A/A control: whatever separates it from the first is the harness's own
// noise, and the ratios are taken to the mean of the two), the SDK's own
// middleware, and toolmw's full chain.
var interleavedWays = [4]struct{ metric, sdk, mcpgo string }{
	{"bare-ns", wayBare, wayBare},
	{"bare2-ns", wayBare, wayBare},
	{"own-ns", waySDKMW, wayMCPGoMW},
	{"toolmw-ns", wayToolmw, wayToolmw},
}

// BenchmarkInterleaved calls the four servers of one SDK and transport
// (bare, bare again, own middleware, toolmw) in a new random order in every
// round of the same loop, so that whatever else the machine does, and the
// garbage collector's cycles (one heap for all four), fall on all of them
// alike and never in step with one. Each op is one call to each server; it
// reports each one's mean time per call (bare-ns, bare2-ns, own-ns,
// toolmw-ns). bench/run runs it many times and reports the ratios per count
// with a confidence interval; the bare2/bare ratio shows how far apart two
// identical servers measure.
func BenchmarkInterleaved(b *testing.B) {
	b.Run("sdk-in-memory", func(b *testing.B) {
		var calls [4]func()
		for i, w := range interleavedWays {
			cs := sdkInMemory(b, sdkServer(b, w.sdk, toolctx.TransportInMemory))
			p := echoParams()
			calls[i] = func() { sdkCall(b, cs, p) }
		}
		interleave(b, calls)
	})
	b.Run("sdk-http", func(b *testing.B) {
		var calls [4]func()
		for i, w := range interleavedWays {
			cs := sdkHTTP(b, sdkServer(b, w.sdk, toolctx.TransportStreamableHTTP), 1)[0]
			p := echoParams()
			calls[i] = func() { sdkCall(b, cs, p) }
		}
		interleave(b, calls)
	})
	b.Run("mcpgo-in-process", func(b *testing.B) {
		var calls [4]func()
		for i, w := range interleavedWays {
			c := mcpgoInProcess(b, mcpgoServer(b, w.mcpgo, mcpgoEcho))
			calls[i] = func() { mcpgoCall(b, c, mcpgoRequest(map[string]any{"q": "hello"})) }
		}
		interleave(b, calls)
	})
	b.Run("mcpgo-http", func(b *testing.B) {
		var calls [4]func()
		for i, w := range interleavedWays {
			c := mcpgoHTTP(b, mcpgoServer(b, w.mcpgo, mcpgoEcho), 1)[0]
			calls[i] = func() { mcpgoCall(b, c, mcpgoRequest(map[string]any{"q": "hello"})) }
		}
		interleave(b, calls)
	})
}

func interleave(b *testing.B, calls [4]func()) {
	for _, c := range calls {
		c() // warm up
	}
	// A fixed seed: the same sequence of orders in every count.
	rng := rand.New(rand.NewPCG(1, 2))
	order := [4]int{0, 1, 2, 3}
	var total [4]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	rounds := 0
	for b.Loop() {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, j := range order {
			start := time.Now()
			calls[j]()
			total[j] += time.Since(start)
		}
		rounds++
	}
	b.StopTimer()
	for j, w := range interleavedWays {
		b.ReportMetric(float64(total[j].Nanoseconds())/float64(rounds), w.metric)
	}
}
