package main

import (
	"bufio"
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A pairedCase is one SDK and transport: how many calls an arm makes in
// one go, and (mixed) how many times a round runs every arm so; for the
// cases of one argument size, how many rounds in how many worker
// processes at most (0: -bursts and -generations).
type pairedCase struct {
	name                string
	calls, steps        int
	bursts, generations int
}

var cases = []pairedCase{
	// mixed: a step is 8 calls per arm (0.4-2.4 ms), so that the arms of a
	// step share the machine's conditions closely, and a round about 20 ms
	// of calls per arm, long enough that the collection closing it is a
	// small part of it. Steps of fewer calls charge the arms that run more
	// code of their own than the bare SDK for bringing it back after the
	// other arms' calls, which a server serving its own calls does not pay:
	// on go-sdk in memory toolmw / bare read 1.046, 1.037, 1.028, 1.013,
	// 1.016, 1.012 with steps of 1, 2, 4, 8, 16, 32 calls (the same calls
	// per round), own / bare 1.056 to 1.028-1.035; see BENCHMARKS.md's
	// method. separate: a burst is calls×steps/4 calls per arm, about 5 ms.
	{"sdk-in-memory", 8, 16, 0, 0},
	{"sdk-http", 8, 12, 0, 0},
	{"mcpgo-in-process", 8, 32, 0, 0},
	{"mcpgo-http", 8, 12, 0, 0},
}

// sizeCases are the argument-and-result-size cases (-sizes): go-sdk in
// memory and mcp-go in process, echo with an argument of 100 B to 1 MB.
// The argument size is what they show, not a verdict: fewer rounds, and
// fewer steps the dearer a call (1 MB costs 100-150 ms a call), about
// 3-8 s per case on two cores (80 s for the eight, with twice the rounds
// of 10 KB and up, at f8ff0b4 on the AMD EPYC host).
var sizeCases = []sizeCase{
	{"100B", 64, 40, 4},
	{"10KB", 16, 24, 3},
	{"100KB", 4, 12, 2},
	{"1MB", 1, 6, 2},
}

// sizeCase is one argument size: its steps per round, rounds and worker
// processes.
type sizeCase struct {
	size                       string
	steps, bursts, generations int
}

// arms of every burst: the name written and the worker's arm.
var arms = []struct{ name, worker string }{
	{"bare", "bare"},
	{"bare2", "bare"},
	{"own", "own"},
	{"toolmw", "toolmw"},
}

func main() {
	bin := flag.String("bin", "", "the compiled bench test binary (go test -c ./bench)")
	bursts := flag.Int("bursts", 280, "rounds (mixed) or bursts (separate) per case")
	warmup := flag.Int("warmup", 2, "rounds (bursts) run first by each generation of workers and not written: the first calls' one-time work")
	generations := flag.Int("generations", 28, "how many times each case's workers are started (the bursts are shared among them)")
	mode := flag.String("mode", "mixed", "mixed: every arm of a case in one worker process; separate: each arm in a process of its own")
	scale := flag.Float64("scale", 1, "multiplies each case's steps per round (mixed) or calls per burst (separate)")
	stepCalls := flag.Int("step-calls", 0, "calls per arm in one step of a round (0: each case's own)")
	only := flag.String("cases", "", "comma-separated case names (all when empty, the sizes' cases as -sizes says)")
	sizes := flag.String("sizes", "100B,10KB,100KB,1MB", "comma-separated argument sizes of the size cases (<sdk>@<size>) run after the others; empty for none")
	out := flag.String("out", "", "file to write the per-burst lines to (stdout when empty)")
	gogc := flag.String("gogc", "off", "GOGC of every arm's process")
	memlimit := flag.String("gomemlimit", "512MiB", "GOMEMLIMIT of every arm's process")
	procs := flag.Int("gomaxprocs", 1, "GOMAXPROCS of every arm's process (0: the runtime's default); see the package's doc for why 1")
	flag.Parse()
	if *bin == "" {
		log.Fatal("paired: -bin is required: the path of `go test -c ./bench`'s binary")
	}
	if *generations < 1 || *generations > *bursts {
		log.Fatalf("paired: -generations %d: want 1 to -bursts (%d)", *generations, *bursts)
	}
	if *mode != "mixed" && *mode != "separate" {
		log.Fatalf("paired: -mode %q: want mixed or separate", *mode)
	}
	if *bursts < 2 {
		log.Fatalf("paired: -bursts %d: at least 2 are needed for an interval", *bursts)
	}
	all := slices.Clone(cases)
	var sized []pairedCase
	for _, sz := range strings.Split(*sizes, ",") {
		if sz == "" {
			continue
		}
		i := slices.IndexFunc(sizeCases, func(c sizeCase) bool { return c.size == sz })
		if i < 0 {
			log.Fatalf("paired: -sizes: no size %q (100B, 10KB, 100KB, 1MB)", sz)
		}
		c := sizeCases[i]
		for _, sdk := range []string{"sdk-in-memory", "mcpgo-in-process"} {
			sized = append(sized, pairedCase{sdk + "@" + c.size, 1, c.steps, c.bursts, c.generations})
		}
	}
	all = append(all, sized...)
	selected := all
	if *only != "" {
		selected = nil
		for _, n := range strings.Split(*only, ",") {
			i := slices.IndexFunc(all, func(c pairedCase) bool { return c.name == n })
			if i < 0 {
				log.Fatalf("paired: no case %q (cases: %s)", n, caseNames(all))
			}
			selected = append(selected, all[i])
		}
	}
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		w = f
	}
	env := append(os.Environ(), "GOGC="+*gogc, "GOMEMLIMIT="+*memlimit)
	if *procs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(*procs))
	}
	// A fixed seed: the same sequence of orders in every run.
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range selected {
		steps := max(1, int(float64(c.steps)**scale))
		if *stepCalls > 0 {
			steps = max(1, steps*c.calls / *stepCalls) // the same calls per round
			c.calls = *stepCalls
		}
		bursts, generations := *bursts, *generations
		if c.bursts > 0 {
			bursts, generations = min(bursts, c.bursts), min(generations, c.generations)
		}
		if err := runCase(w, *bin, env, *mode == "mixed", c, steps, generations, *warmup, bursts, rng); err != nil {
			log.Fatalf("paired: %s: %v", c.name, err)
		}
	}
}

// runCase starts the case's workers, runs warmup+bursts bursts and writes
// the bursts after the warm-up.
//
// mixed: one worker process serves every arm (each its own server and
// client), and a burst is one round of that worker: steps times every arm
// for c.calls calls, in a new random order each time. Otherwise each arm
// has a process of its own, and a burst runs each arm once, in a new
// random order, for c.calls×steps/4 calls (about as many calls per arm and
// burst as a round's, in a quarter of them).
//
// The workers are started again generations times in all; each generation
// warms up for warmup bursts, which are not written.
func runCase(w io.Writer, bin string, env []string, mixed bool, c pairedCase, steps, generations, warmup, bursts int, rng *rand.Rand) error {
	start := time.Now()
	calls := c.calls * steps // per arm and burst
	if !mixed {
		calls = max(1, calls/4)
	}
	env = append(slices.Clone(env), "TOOLMW_PAIRED_BATCH="+strconv.Itoa(calls))
	var procs []*worker
	defer func() {
		for _, wk := range procs {
			_ = wk.stop()
		}
	}()
	// spawn (re)starts the workers: each generation of processes gets its
	// own heap layout and placement, so that what makes one process (or
	// one arm's objects) cheaper than its twin for its whole life averages
	// out over the generations instead of biasing every burst alike.
	spawn := func() error {
		for _, wk := range procs {
			if err := wk.stop(); err != nil {
				return err
			}
		}
		procs = procs[:0]
		if mixed {
			wk, err := startWorker(bin, append(slices.Clone(env), "TOOLMW_PAIRED_SEED="+strconv.FormatUint(rng.Uint64(), 10)), c.name+"/mixed")
			if err != nil {
				return err
			}
			procs = append(procs, wk)
			return nil
		}
		for _, a := range arms {
			wk, err := startWorker(bin, env, c.name+"/"+a.worker)
			if err != nil {
				return fmt.Errorf("arm %s: %w", a.name, err)
			}
			procs = append(procs, wk)
		}
		return nil
	}
	// burst runs one burst and returns each arm's figures.
	order := make([]int, len(arms))
	for i := range order {
		order[i] = i
	}
	burst := func() ([]burst, error) {
		got := make([]burst, len(arms))
		if mixed {
			wk := procs[0]
			if err := wk.send(fmt.Sprintf("round %d %d %d", c.calls, steps, rng.Uint64())); err != nil {
				return nil, err
			}
			for j := range arms {
				r, err := wk.answer()
				if err != nil {
					return nil, fmt.Errorf("arm %s: %w", arms[j].name, err)
				}
				got[j] = r
			}
			return got, nil
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, j := range order {
			err := procs[j].send("run " + strconv.Itoa(calls))
			r, err2 := procs[j].answer()
			if err = cmp.Or(err, err2); err != nil {
				return nil, fmt.Errorf("arm %s: %w", arms[j].name, err)
			}
			got[j] = r
		}
		return got, nil
	}
	per := (bursts + generations - 1) / generations
	var aa, tm []float64
	written, gen := 0, -1
	for b := 0; written < bursts; b++ {
		gb := b % (warmup + per) // the burst's place in its generation
		if gb == 0 {
			if err := spawn(); err != nil {
				return err
			}
			gen++
		}
		got, err := burst()
		if err != nil {
			return fmt.Errorf("burst %d: %w", b, err)
		}
		if gb < warmup {
			continue
		}
		written++
		n := float64(calls)
		for j, a := range arms {
			r := got[j]
			fmt.Fprintf(w, "Paired/%s burst=%d arm=%s cpu-ns/op=%.1f sum-ns/op=%.1f gc-ns/op=%.1f wall-ns/op=%.1f B/op=%.0f gen=%d\n",
				c.name, written-1, a.name, r.cpu/n, r.sum/n, r.gc/n, r.wall/n, r.alloc/n, gen)
		}
		aa = append(aa, got[1].cpu/got[0].cpu)
		tm = append(tm, got[3].cpu/((got[0].cpu+got[1].cpu)/2))
	}
	log.Printf("%s: %d bursts × %d calls per arm in %d generations, %s: median A/A %.3f, toolmw/bare %.3f (the report gives the intervals)",
		c.name, bursts, calls, gen+1, time.Since(start).Round(time.Second), median(aa), median(tm))
	return nil
}

// burst is one arm's answer to one burst: CPU time, robust to spikes
// (the worker's robust-ns: see pairedServe) and summed over the steps,
// the closing collection's share, wall time and bytes allocated, for the
// whole burst.
type burst struct{ cpu, sum, gc, wall, alloc float64 }

// worker is one arm's BenchmarkPairedWorker process and its pipes.
type worker struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	log  syncBuffer
	done bool
}

// syncBuffer is the worker's output, written by exec's copying goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startWorker(bin string, env []string, spec string) (*worker, error) {
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", "^BenchmarkPairedWorker$",
		"-test.benchtime", "1x", "-test.count", "1", "-test.timeout", "60m")
	cmd.Env = append(slices.Clone(env), "TOOLMW_PAIRED_WORKER="+spec)
	cmd.ExtraFiles = []*os.File{cmdR, ansW} // descriptors 3 and 4
	w := &worker{cmd: cmd, in: cmdW, out: bufio.NewReader(ansR)}
	// The test binary's own lines (goos, PASS) would bury the progress
	// lines: its output is kept for the error message of a failed burst.
	cmd.Stdout, cmd.Stderr = &w.log, &w.log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	cmdR.Close()
	ansW.Close()
	return w, nil
}

// send writes one command to the worker.
func (w *worker) send(cmd string) error {
	_, err := fmt.Fprintln(w.in, cmd)
	return err
}

// answer reads the worker's answer to a burst.
func (w *worker) answer() (burst, error) {
	line, err := w.out.ReadString('\n')
	if err != nil {
		return burst{}, fmt.Errorf("no answer (%v); the worker's output:\n%s", err, w.log.String())
	}
	var r burst
	if _, err := fmt.Sscanf(line, "cpu-ns=%g robust-ns=%g gc-ns=%g wall-ns=%g alloc-B=%g", &r.sum, &r.cpu, &r.gc, &r.wall, &r.alloc); err != nil {
		return burst{}, fmt.Errorf("answer %q: %v", line, err)
	}
	return r, nil
}

// stop tells the worker to quit and waits for it to exit.
func (w *worker) stop() error {
	if w.done {
		return nil
	}
	w.done = true
	fmt.Fprintln(w.in, "quit")
	w.in.Close()
	if err := w.cmd.Wait(); err != nil {
		return fmt.Errorf("worker %v: %v:\n%s", w.cmd.Env[len(w.cmd.Env)-1], err, w.log.String())
	}
	return nil
}

func caseNames(cases []pairedCase) string {
	var ns []string
	for _, c := range cases {
		ns = append(ns, c.name)
	}
	return strings.Join(ns, ", ")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return s[len(s)/2]
}
