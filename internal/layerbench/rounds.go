//go:build unix

package layerbench

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"
	"testing"
	"time"
)

// An Arm is one server and client of a layer benchmark: Call makes one
// call.
type Arm struct {
	Name string
	Call func()
}

// Steps and Block are a round's shape: Steps times every arm, Block calls
// each time. From 8 calls a block on, the ratios stop moving (see
// BENCHMARKS.md's method paragraph): shorter blocks charge an arm for
// bringing its own code back after the other arms' calls.
const (
	Steps = 40
	Block = 8
)

// Run warms arms up and runs b.N rounds of them; the first two arms are
// the bare ones. Each round collects the heap, then runs Steps times
// every arm for Block calls, in a new random order each step, with the
// collector off, reading the process's CPU time (getrusage, every thread)
// around each arm's block. It reports each arm's CPU per call over the
// mean of the two bare arms' (the 20% trimmed mean over the rounds) as
// <name>/bare, and the bare arms' CPU per call as bare-cpu-ns/call.
func Run(b *testing.B, arms []Arm) {
	if len(arms) < 2 {
		b.Fatalf("layerbench.Run: %d arms, want the two bare ones first and more", len(arms))
	}
	for _, a := range arms {
		for range 100 {
			a.Call()
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, len(arms))
	for i := range order {
		order[i] = i
	}
	ratios := make([][]float64, len(arms))
	var bare []float64
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
		cpu := make([]time.Duration, len(arms))
		for range Steps {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, j := range order {
				c0 := processCPU()
				for range Block {
					arms[j].Call()
				}
				cpu[j] += processCPU() - c0
			}
		}
		base := float64(cpu[0]+cpu[1]) / 2
		for j := range arms {
			ratios[j] = append(ratios[j], float64(cpu[j])/base)
		}
		bare = append(bare, base/(Steps*Block))
	}
	b.StopTimer()
	for j, a := range arms {
		b.ReportMetric(trimmedMean(ratios[j]), a.Name+"/bare")
	}
	b.ReportMetric(trimmedMean(bare), "bare-cpu-ns/call")
}

// processCPU is the process's user and system CPU time, every thread.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// trimmedMean is the mean of v without its lowest and highest 20%.
func trimmedMean(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	k := len(v) / 5
	v = v[k : len(v)-k]
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
