package bench

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/toolmw/toolmw/toolctx"
)

// BenchmarkABCPU is the A/B harness for a change inside an
// adapter (a trick that claims to save time): build the test binary with
// and without the change and alternate them, each run printing toolmw's
// CPU time per call next to two identical bare servers'. Each op is one
// round: a block of calls to bare, bare2 and toolmw, in a new random order,
// the process's CPU time (getrusage) read around each block. On a machine
// other work shares, CPU time moves far less than wall time, which also
// counts the waits for a core. The ratio to judge is toolmw-cpu /
// mean(bare-cpu, bare2-cpu); bare2-cpu / bare-cpu is the A/A control.
//
//	go test -c -o /tmp/a.test ./bench   # with the change, then /tmp/b.test without
//	/tmp/a.test -test.run '^$' -test.bench 'ABCPU' -test.benchtime 100x
func BenchmarkABCPU(b *testing.B) {
	const block = 50
	ways := []struct{ metric, way string }{{"bare-cpu", wayBare}, {"bare2-cpu", wayBare}, {"toolmw-cpu", wayToolmw}}
	run := func(b *testing.B, calls []func()) {
		for _, c := range calls {
			for range block {
				c() // warm up
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		order := []int{0, 1, 2}
		total := make([]time.Duration, len(calls))
		rounds := 0
		b.ResetTimer()
		for b.Loop() {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, j := range order {
				c0 := cpuTime()
				for range block {
					calls[j]()
				}
				total[j] += cpuTime() - c0
			}
			rounds++
		}
		b.StopTimer()
		for j, w := range ways {
			b.ReportMetric(float64(total[j].Nanoseconds())/float64(rounds*block), w.metric)
		}
	}
	b.Run("sdk-in-memory", func(b *testing.B) {
		calls := make([]func(), len(ways))
		for i, w := range ways {
			cs := sdkInMemory(b, sdkServer(b, w.way, toolctx.TransportInMemory))
			p := echoParams()
			calls[i] = func() { sdkCall(b, cs, p) }
		}
		run(b, calls)
	})
	b.Run("mcpgo-in-process", func(b *testing.B) {
		calls := make([]func(), len(ways))
		for i, w := range ways {
			c := mcpgoInProcess(b, mcpgoServer(b, w.way, mcpgoEcho))
			calls[i] = func() { mcpgoCall(b, c, mcpgoRequest(map[string]any{"q": "hello"})) }
		}
		run(b, calls)
	})
}
