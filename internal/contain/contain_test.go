package contain_test

import (
	"errors"
	"iter"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/internal/contain"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunReturns(t *testing.T) {
	ran := false
	v, escaped := contain.Run(func() { ran = true })
	assert.True(t, ran, "f runs")
	assert.False(t, escaped, "a return is not an escape")
	assert.Nil(t, v, "nothing recovered from a return")
}

func TestRunRecoversAPanic(t *testing.T) {
	boom := errors.New("boom")
	v, escaped := contain.Run(func() { panic(boom) })
	assert.True(t, escaped, "a panic escapes f")
	assert.Same(t, boom, v, "the panic value is what recover returned")
}

func TestRunRecoversPanicNil(t *testing.T) {
	v, escaped := contain.Run(func() { panic(nil) })
	assert.True(t, escaped, "panic(nil) escapes f")
	var pn *runtime.PanicNilError
	assert.ErrorAs(t, v.(error), &pn, "panic(nil) recovers as a *runtime.PanicNilError")
}

// A Goexit in f ends f's coroutine, not the caller: the caller goes on
// after Run, and the coroutine's deferred functions have run.
func TestRunContainsGoexit(t *testing.T) {
	deferred := false
	v, escaped := contain.Run(func() {
		defer func() { deferred = true }()
		runtime.Goexit()
	})
	assert.True(t, escaped, "a Goexit escapes f")
	assert.Nil(t, v, "a Goexit has no value")
	assert.True(t, deferred, "f's deferred calls ran before Run returned")
}

// Run on a goroutine that has called Goexit before, nested Runs, and many
// goroutines at once: each caller gets its own outcome (go test -race).
func TestRunConcurrentAndNested(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				var inner bool
				v, escaped := contain.Run(func() {
					_, inner = contain.Run(func() {
						if (i+j)%2 == 0 {
							runtime.Goexit()
						}
						panic(j)
					})
					if j%3 == 0 {
						runtime.Goexit()
					}
				})
				require.True(t, inner, "the inner Run's f escaped")
				require.Equal(t, j%3 == 0, escaped, "the outer Run escapes only by its own Goexit")
				require.Nil(t, v, "a Goexit has no value")
			}
		}()
	}
	wg.Wait()
}

func BenchmarkRun(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		contain.Run(func() {})
	}
}

// BenchmarkGoAndWait is what Run replaces: a goroutine per call, and a
// wait for it.
func BenchmarkGoAndWait(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { wg.Done() }()
		wg.Wait()
	}
}

type nop struct{ n int }

func (r *nop) Run() { r.n++ }

// BenchmarkDo is Do with a pointer Runner, as the adapter kit calls it:
// the conversion to the interface does not allocate.
func BenchmarkDo(b *testing.B) {
	b.ReportAllocs()
	r := new(nop)
	for b.Loop() {
		contain.Do(r)
	}
}

// A state reused after a panic or a Goexit reports the next call's outcome
// only.
func TestDoAfterEscapes(t *testing.T) {
	r := new(nop)
	for range 100 {
		v, escaped := contain.Run(func() { panic("boom") })
		require.True(t, escaped, "a panic escapes")
		require.Equal(t, "boom", v, "the panic value")
		_, escaped = contain.Run(func() { runtime.Goexit() })
		require.True(t, escaped, "a Goexit escapes")
		v, escaped = contain.Do(r)
		require.False(t, escaped, "a return after escapes is not an escape")
		require.Nil(t, v, "nothing recovered from a return")
	}
	assert.Equal(t, 100, r.n, "the Runner ran each time")
}

// Do allocates no more than the iter.Pull it runs on: its own state is
// pooled, and a pointer Runner converts without an allocation. (sync.Pool
// drops an item now and then under the race detector: the bound allows
// one allocation.)
func TestDoAllocatesOnlyIterPull(t *testing.T) {
	seq := func(func(struct{}) bool) {}
	pull := testing.AllocsPerRun(1000, func() {
		next, stop := iter.Pull(seq)
		next()
		stop()
	})
	r := new(nop)
	do := testing.AllocsPerRun(1000, func() { contain.Do(r) })
	t.Logf("Do %.2f allocations per call, iter.Pull alone %.2f", do, pull)
	assert.LessOrEqual(t, do, pull+1, "Do allocates beyond iter.Pull's %.2f", pull)
}
