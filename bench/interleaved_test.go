package bench

import (
	"testing"
	"time"

	"github.com/toolmw/toolmw/toolctx"
)

// BenchmarkInterleaved calls the three servers of one SDK and transport
// (bare, own middleware, toolmw) in turn within the same loop, rotating
// which goes first, so that whatever else the machine is doing falls on all
// three alike. Each op is one call to each server; it reports each one's
// mean time per call (bare-ns, own-ns, toolmw-ns). On a shared machine
// these ratios are steadier than those of separate sub-benchmarks.
func BenchmarkInterleaved(b *testing.B) {
	b.Run("sdk-in-memory", func(b *testing.B) {
		var calls [3]func()
		for i, way := range ways {
			cs := sdkInMemory(b, sdkServer(b, way, toolctx.TransportInMemory))
			p := echoParams()
			calls[i] = func() { sdkCall(b, cs, p) }
		}
		interleave(b, calls)
	})
	b.Run("sdk-http", func(b *testing.B) {
		var calls [3]func()
		for i, way := range ways {
			cs := sdkHTTP(b, sdkServer(b, way, toolctx.TransportStreamableHTTP), 1)[0]
			p := echoParams()
			calls[i] = func() { sdkCall(b, cs, p) }
		}
		interleave(b, calls)
	})
	b.Run("mcpgo-in-process", func(b *testing.B) {
		var calls [3]func()
		for i, way := range mcpgoWays {
			c := mcpgoInProcess(b, mcpgoServer(b, way, mcpgoEcho))
			calls[i] = func() { mcpgoCall(b, c, mcpgoRequest(map[string]any{"q": "hello"})) }
		}
		interleave(b, calls)
	})
	b.Run("mcpgo-http", func(b *testing.B) {
		var calls [3]func()
		for i, way := range mcpgoWays {
			c := mcpgoHTTP(b, mcpgoServer(b, way, mcpgoEcho), 1)[0]
			calls[i] = func() { mcpgoCall(b, c, mcpgoRequest(map[string]any{"q": "hello"})) }
		}
		interleave(b, calls)
	})
}

func interleave(b *testing.B, calls [3]func()) {
	for _, c := range calls {
		c() // warm up
	}
	var total [3]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		for k := range 3 {
			j := (i + k) % 3
			start := time.Now()
			calls[j]()
			total[j] += time.Since(start)
		}
		i++
	}
	b.StopTimer()
	for j, unit := range []string{"bare-ns", "own-ns", "toolmw-ns"} {
		b.ReportMetric(float64(total[j].Nanoseconds())/float64(i), unit)
	}
}
