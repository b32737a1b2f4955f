package bench

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mark3labs/mcp-go/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/toolctx"
)

// pairedWorkerEnv names what a BenchmarkPairedWorker process serves, as
// "<case>/<arm>": sdk-in-memory, sdk-http, mcpgo-in-process or mcpgo-http;
// bare, own or toolmw, or mixed (every arm of the case in this one
// process: bare, a second bare, own and toolmw, in that order).
const pairedWorkerEnv = "TOOLMW_PAIRED_WORKER"

// pairedBatchEnv is the number of calls in every burst the worker will be
// asked for (see pairedArm: toolmw's audit writer writes one batch of that
// size per burst).
const pairedBatchEnv = "TOOLMW_PAIRED_BATCH"

// pairedSeedEnv seeds the order in which a mixed worker sets up its arms
// (see pairedArms); bench/internal/paired draws one for every process.
const pairedSeedEnv = "TOOLMW_PAIRED_SEED"

// pairedMixedArms are the arms of a mixed worker, in the order its "run"
// command numbers them.
var pairedMixedArms = []string{"bare", "bare", "own", "toolmw"}

// BenchmarkPairedWorker is bench/internal/paired's worker: a long-lived
// process that sets up the servers of one case and their clients once,
// then runs bursts of calls when told to, so that the arms can alternate
// in short bursts without a process start (or a cold heap) per burst. It
// serves one arm, or every arm of the case at once (mixed): then the arms
// alternate inside one process, and what makes one process cheaper than
// another for its whole life (its heap's layout, its threads' placement)
// falls on all of them alike. It reads commands from file descriptor 3 and
// answers on descriptor 4 (see pairedServe); run without
// TOOLMW_PAIRED_WORKER it drives itself through short bursts of every arm
// of every case, a check that the workers bench/internal/paired starts can
// serve.
func BenchmarkPairedWorker(b *testing.B) {
	spec := os.Getenv(pairedWorkerEnv)
	if spec == "" {
		for _, cs := range []string{"sdk-in-memory", "sdk-http", "mcpgo-in-process", "mcpgo-http"} {
			for _, arm := range []string{"bare", "own", "toolmw", "mixed"} {
				b.Run(cs+"/"+arm, func(b *testing.B) {
					// Bursts of 3 calls; a mixed round of 2 steps of 3 calls
					// each is one batch of toolmw's writer.
					batch, cmds := 3, "run 3\nrun 3\nquit\n"
					if arm == "mixed" {
						batch, cmds = 6, "round 3 2 7\nrun 3 0\nround 3 2 8\nquit\n"
					}
					arms := pairedArms(b, cs, arm, batch, 1)
					var out strings.Builder
					if err := pairedServe(arms, strings.NewReader(cmds), &out); err != nil {
						b.Fatal(err)
					}
					if got, want := strings.Count(out.String(), "cpu-ns="), strings.Count(cmds, "run")+len(arms)*strings.Count(cmds, "round"); got != want {
						b.Fatalf("%s/%s answered %d bursts of %d:\n%s", cs, arm, got, want, out.String())
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
	batch, err := strconv.Atoi(os.Getenv(pairedBatchEnv))
	if err != nil || batch < 1 {
		b.Fatalf("%s=%q: want the calls per burst, ≥ 1", pairedBatchEnv, os.Getenv(pairedBatchEnv))
	}
	var seed uint64
	if v := os.Getenv(pairedSeedEnv); v != "" {
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			b.Fatalf("%s=%q: want an unsigned integer", pairedSeedEnv, v)
		}
	}
	arms := pairedArms(b, cs, arm, batch, seed)
	in, out := os.NewFile(3, "commands"), os.NewFile(4, "answers")
	if in == nil || out == nil {
		b.Fatal("BenchmarkPairedWorker: descriptors 3 and 4 are not open (run it through bench/internal/paired)")
	}
	defer in.Close()
	defer out.Close()
	if err := pairedServe(arms, in, out); err != nil {
		b.Fatal(err)
	}
}

// pairedCall is one arm of a worker: call makes one call through it, and
// settle, told how many calls the burst made, returns once the work they
// left behind is done (the audit writer has written their rows), or an
// error after a few seconds. It reports whether it waited for a batch of
// rows to be written: a round keeps such a step whole (see pairedServe).
type pairedCall struct {
	call   func()
	settle func(calls int) (wrote bool, err error)
}

// pairedArms sets up the arms a worker serves: arm alone, or for "mixed"
// each of pairedMixedArms, each its own server and client, set up in an
// order drawn from seed (they are answered for in pairedMixedArms' order
// all the same). Bursts will be of batch calls.
//
// The order of setting up decides where each arm's long-lived objects
// land; set up always in the same order, the first bare arm measured 0.4%
// dearer than the second, process after process, on go-sdk (an A/A that
// more processes do not bring to 1). Drawn anew for every process, it is
// one more piece of a process's luck, which the generations average out.
func pairedArms(b testing.TB, cs, arm string, batch int, seed uint64) []pairedCall {
	if arm != "mixed" {
		return []pairedCall{pairedArm(b, cs, arm, batch)}
	}
	arms := make([]pairedCall, len(pairedMixedArms))
	for _, k := range rand.New(rand.NewPCG(seed, 2)).Perm(len(arms)) {
		arms[k] = pairedArm(b, cs, pairedMixedArms[k], batch)
	}
	return arms
}

// pairedArm sets up one arm of one case.
//
// toolmw's audit writer is the full chain's (audit.NewAsync into a slog
// sink, Drop), with one difference: its batch is batch rows (the calls of
// a burst, or of a round's steps) and it flushes on nothing else, so the
// rows are written in one batch as soon as the last call has emitted its
// row, and settle waits for that. The arm is thus charged for writing its
// own rows, all of them, and no other arm is charged any: with the default
// 200 ms flush interval the rows were written at a moment unrelated to the
// bursts (in the burst of another arm, or between bursts, where no one paid
// for them).
func pairedArm(b testing.TB, cs, arm string, batch int) pairedCall {
	way := map[string]string{"bare": wayBare, "toolmw": wayToolmw}[arm]
	if arm == "own" {
		way = waySDKMW
		if strings.HasPrefix(cs, "mcpgo") {
			way = wayMCPGoMW
		}
	}
	if way == "" {
		b.Fatalf("paired worker: no arm %q (bare, own, toolmw, mixed)", arm)
	}
	var mw toolctx.Middleware
	settle := func(int) (bool, error) { return false, nil }
	if way == wayToolmw {
		w := newAsync(b, audit.NewSlogSink(slog.NewTextHandler(io.Discard, nil)), audit.AsyncConfig{
			Policy: audit.Drop, BatchSize: batch, QueueSize: max(batch, 8192), FlushInterval: time.Hour,
		})
		mw = fullChain(w).Middleware()
		var emitted uint64
		settle = func(n int) (bool, error) {
			emitted += uint64(n)
			if emitted%uint64(batch) != 0 {
				return false, nil // the batch is not full yet: nothing is written
			}
			for deadline := time.Now().Add(5 * time.Second); ; {
				st := w.Stats()
				switch {
				case st.Dropped > 0:
					return true, fmt.Errorf("paired worker: the audit writer dropped %d rows", st.Dropped)
				case st.Written == emitted:
					return true, nil
				case time.Now().After(deadline):
					return true, fmt.Errorf("paired worker: the audit writer has written %d rows of %d after 5 s", st.Written, emitted)
				}
				time.Sleep(20 * time.Microsecond)
			}
		}
	}
	// A case "<case>@<size>" (one of sizes: 100B to 1MB) calls echo with
	// an argument, and so a result, of that size.
	q := "hello"
	if base, size, ok := strings.Cut(cs, "@"); ok {
		n := -1
		for _, sz := range sizes {
			if sz.name == size {
				n = sz.n
			}
		}
		if n < 0 {
			b.Fatalf("paired worker: case %q: no size %q", cs, size)
		}
		cs, q = base, strings.Repeat("a", n)
	}
	switch cs {
	case "sdk-in-memory", "sdk-http":
		tr := toolctx.TransportInMemory
		if cs == "sdk-http" {
			tr = toolctx.TransportStreamableHTTP
		}
		s := sdkServerWith(b, way, tr, mw)
		cs0 := sdkHTTP1(b, s, cs == "sdk-http")
		p := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"q":"` + q + `"}`)}
		return pairedCall{func() { sdkCall(b, cs0, p) }, settle}
	case "mcpgo-in-process", "mcpgo-http":
		s := mcpgoServerWith(b, way, mcpgoEcho, mw)
		var c *client.Client
		if cs == "mcpgo-http" {
			c = mcpgoHTTP(b, s, 1)[0]
		} else {
			c = mcpgoInProcess(b, s)
		}
		req := mcpgoRequest(map[string]any{"q": q})
		return pairedCall{func() { mcpgoCall(b, c, req) }, settle}
	}
	b.Fatalf("paired worker: no case %q", cs)
	return pairedCall{}
}

// pairedServe answers the commands of bench/internal/paired, one a line:
//
//	run N [K]         N calls on arm K (0 when not given), then a forced
//	                  collection; answers "cpu-ns=C robust-ns=R gc-ns=G
//	                  wall-ns=W alloc-B=A": the process's CPU time (every
//	                  thread) over the calls and until the arm has settled
//	                  (its audit rows written), the same figure robust to
//	                  spikes (see below; for a run, C itself), the CPU time
//	                  of the collection after them, the wall time of the
//	                  calls, and the bytes they allocated
//	round N STEPS SEED every arm, STEPS times, N calls each time, the arms in
//	                  a new random order each step (math/rand/v2's PCG seeded
//	                  with SEED), then one forced collection; answers one
//	                  such line per arm, in the arms' order, its figures
//	                  summed over the steps and the collection shared out by
//	                  the bytes each arm allocated
//	quit              (or the end of the input) returns
//
// A round pairs the arms at a fine grain: an arm's N calls take a fraction
// of a millisecond, so whatever else the machine does (another process on
// the core's sibling, a cold cache after a preemption) changes in the
// middle of few of them, and falls on every arm alike over the steps.
//
// A round's robust figure for an arm is the 20% trimmed mean of its steps'
// CPU times times its steps, except that a step whose settle waited for a
// batch of audit rows to be written is added whole: the trimming takes
// away the few steps a preemption or an interrupt fell on (on a loaded
// machine several per round, each a few % of the round's total, and they
// fall on one arm, not all), never the writer's batch, which toolmw pays
// in full. Every step's CPU reading also costs one clock read, measured
// before each round and taken off each step, so that a constant the arms
// share does not pull their ratios towards 1.
//
// The collection after a burst or round (and one before the first) means
// each starts from the same heap, none inherits another's garbage, and
// (with GOGC=off and a memory limit above what one allocates) no
// collection falls inside one: a collection's cost follows the live heap,
// not the burst, and one falling into some bursts and not others is most
// of their spread. It is timed on its own (gc-ns).
func pairedServe(arms []pairedCall, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	runtime.GC()
	// figures are one arm's over a burst or a round: steps holds the CPU
	// time of each step whose settle wrote nothing, whole the sum of the
	// others'.
	type figures struct {
		cpu, wall, alloc, whole int64
		steps                   []int64
	}
	var clock int64 // one clock read's CPU time (see clockCost)
	// burst is n calls on arm a, its figures added to f.
	burst := func(a pairedCall, n int, f *figures) error {
		metrics.Read(allocs)
		a0 := allocs[0].Value.Uint64()
		c0, w0 := processCPU(), time.Now()
		for range n {
			a.call()
		}
		wall := time.Since(w0)
		wrote, err := a.settle(n)
		if err != nil {
			return err
		}
		cpu := processCPU() - c0 - clock
		metrics.Read(allocs)
		f.cpu += cpu
		if wrote {
			f.whole += cpu
		} else {
			f.steps = append(f.steps, cpu)
		}
		f.wall += wall.Nanoseconds()
		f.alloc += int64(allocs[0].Value.Uint64() - a0)
		return nil
	}
	// collect collects the heap and answers for figs, sharing the
	// collection out by the bytes allocated.
	collect := func(figs []figures) error {
		c0 := processCPU()
		runtime.GC()
		gc := processCPU() - c0
		var total int64
		for _, f := range figs {
			total += f.alloc
		}
		for _, f := range figs {
			share := gc / int64(len(figs))
			if total > 0 {
				share = int64(float64(gc) * float64(f.alloc) / float64(total))
			}
			robust := float64(f.whole) + trimmedMean(f.steps, 0.2)*float64(len(f.steps))
			if _, err := fmt.Fprintf(out, "cpu-ns=%d robust-ns=%.0f gc-ns=%d wall-ns=%d alloc-B=%d\n", f.cpu, robust, share, f.wall, f.alloc); err != nil {
				return err
			}
		}
		return nil
	}
	count := func(arg string) (int, error) {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("paired worker: %q: want a count ≥ 1", arg)
		}
		return n, nil
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && f[0] == "quit":
			return nil
		case (len(f) == 2 || len(f) == 3) && f[0] == "run":
			n, err := count(f[1])
			if err != nil {
				return err
			}
			k := 0
			if len(f) == 3 {
				if k, err = strconv.Atoi(f[2]); err != nil || k < 0 || k >= len(arms) {
					return fmt.Errorf("paired worker: run %s %q: want an arm from 0 to %d", f[1], f[2], len(arms)-1)
				}
			}
			// One burst is one step: its robust figure is the burst's own.
			clock = 0
			fig := figures{}
			if err := burst(arms[k], n, &fig); err != nil {
				return err
			}
			fig.whole, fig.steps = fig.cpu, nil
			if err := collect([]figures{fig}); err != nil {
				return err
			}
		case len(f) == 4 && f[0] == "round":
			n, err := count(f[1])
			if err != nil {
				return err
			}
			steps, err := count(f[2])
			if err != nil {
				return err
			}
			seed, err := strconv.ParseUint(f[3], 10, 64)
			if err != nil {
				return fmt.Errorf("paired worker: round seed %q: %v", f[3], err)
			}
			clock = clockCost()
			rng := rand.New(rand.NewPCG(seed, 1))
			order := make([]int, len(arms))
			for i := range order {
				order[i] = i
			}
			figs := make([]figures, len(arms))
			for k := range figs {
				figs[k].steps = make([]int64, 0, steps)
			}
			for range steps {
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, k := range order {
					if err := burst(arms[k], n, &figs[k]); err != nil {
						return err
					}
				}
			}
			if err := collect(figs); err != nil {
				return err
			}
		default:
			return fmt.Errorf("paired worker: unknown command %q (run N [arm], round N STEPS SEED, quit)", sc.Text())
		}
	}
	return sc.Err()
}

// clockCost is the CPU time one processCPU reading adds to the interval
// it closes: the median of the differences between back-to-back readings.
func clockCost() int64 {
	d := make([]int64, 201)
	for i := range d {
		c0 := processCPU()
		d[i] = processCPU() - c0
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// trimmedMean is the mean of v without its lowest and highest trim
// fraction (0 for an empty v).
func trimmedMean(v []int64, trim float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	g := int(trim * float64(len(s)))
	var sum float64
	for _, x := range s[g : len(s)-g] {
		sum += float64(x)
	}
	return sum / float64(len(s)-2*g)
}

// sdkHTTP1 connects one client session to s: over streamable HTTP on
// loopback when overHTTP, else in memory.
func sdkHTTP1(b testing.TB, s *mcp.Server, overHTTP bool) *mcp.ClientSession {
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

// burn is CPU work that takes a millisecond or more: a spike, next to the
// microsecond of a step that does nothing.
func burn() int {
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for range 4 {
		h.Write(buf)
	}
	return len(h.Sum(nil))
}

func TestPairedRoundTrimsSpikesNotTheWritersBatch(t *testing.T) {
	const steps = 20
	var calls, settles, burnt int
	spiky := pairedCall{
		call: func() {
			if calls++; calls == 5 {
				burnt += burn() // one step of twenty
			}
		},
		settle: func(int) (bool, error) { return false, nil },
	}
	batched := pairedCall{
		call: func() {},
		settle: func(int) (bool, error) {
			if settles++; settles%steps != 0 {
				return false, nil
			}
			burnt += burn() // the batch of the round's rows, written at its last step
			return true, nil
		},
	}
	var out strings.Builder
	require.NoError(t, pairedServe([]pairedCall{spiky, batched}, strings.NewReader(fmt.Sprintf("round 1 %d 1\nquit\n", steps)), &out))
	var sum, robust [2]float64
	for i, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		_, err := fmt.Sscanf(l, "cpu-ns=%g robust-ns=%g", &sum[i], &robust[i])
		require.NoError(t, err, "answer %q", l)
	}
	require.Equal(t, 2*sha256.Size, burnt, "one spike and one batch")
	t.Logf("spiky: sum %.0f ns, robust %.0f ns; batched: sum %.0f ns, robust %.0f ns", sum[0], robust[0], sum[1], robust[1])
	assert.Less(t, robust[0], sum[0]/10, "a spike in one step of twenty is trimmed away")
	assert.Greater(t, robust[1], sum[1]*0.9, "the step that waited for the writer's batch counts whole")
}
