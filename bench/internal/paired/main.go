// Command paired measures toolmw's end-to-end cost against the bare SDKs
// on CPU time, so that the verdicts can decide on a shared machine.
//
// For each case (an SDK and a transport) it starts a long-lived worker
// process of the bench test binary (BenchmarkPairedWorker) that serves
// four arms, each its own server and client: bare, a second bare (bare2,
// the A/A control), the SDK's own recover-and-log middleware (own) and
// toolmw's full chain. The worker sets them up once and then runs rounds
// when told to over a pipe, so that no round pays for a process start or
// a cold heap. A round runs every arm a number of times (steps) for a few
// calls each, in a new random order each step, and then collects the heap;
// an arm's figure is the process's CPU time (every thread: client, server,
// the audit writer) over its calls of the round, per call. toolmw's audit
// writer takes the round's rows as one batch and the arm waits for it to
// be written: toolmw pays for its rows, no other arm does.
//
// Two identical bare processes differ by a few % for their whole life (a
// heap laid out otherwise, threads placed otherwise): with an arm per
// process (-mode separate, kept to show it) that difference does not
// shrink with more bursts, and the A/A interval stayed 8-14% wide. In one
// process the arms share all that, and a step is short (well under a
// millisecond), so whatever else the machine does changes in the middle of
// few steps and falls on every arm alike. The worker is started again
// -generations times, so that one arm's luck in where its objects landed
// averages out too.
//
// Every round starts from a collected heap, and the worker runs with
// GOGC=off and GOMEMLIMIT=512MiB by default (above what one round
// allocates), so no collection falls inside a round: the collection after
// each round is timed apart (gc-ns/op, shared out by the bytes each arm
// allocated, which a collector's cost follows under any pacing). The first
// rounds of each generation warm the arms up and are not written.
//
// Ratios are taken within a round; bench/internal/report turns them into
// trimmed means with their intervals. It writes one line per arm per
// round (burst):
//
//	Paired/<case> burst=<n> arm=<arm> cpu-ns/op=<ns> gc-ns/op=<ns> wall-ns/op=<ns> B/op=<bytes> gen=<generation>
//
// which bench/internal/report reads with -paired.
//
//	go test -c -o /tmp/bench.test ./bench
//	go run ./bench/internal/paired -bin /tmp/bench.test -bursts 200 -generations 20 -out bench/results/paired.txt
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
// one go, and (mixed) how many times a round runs every arm so.
type pairedCase struct {
	name         string
	calls, steps int
}

var cases = []pairedCase{
	// mixed: a step is about 0.4 ms of calls per arm on a quiet 2-core
	// machine, short enough that the arms of a step share the machine's
	// conditions, and a round about 20 ms per arm, long enough that the
	// collection closing it is a small part of it. separate: a burst is
	// calls×steps/4 calls per arm, about 5 ms.
	{"sdk-in-memory", 2, 64},
	{"sdk-http", 2, 48},
	{"mcpgo-in-process", 8, 48},
	{"mcpgo-http", 2, 48},
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
	bursts := flag.Int("bursts", 200, "rounds (mixed) or bursts (separate) per case")
	warmup := flag.Int("warmup", 2, "rounds (bursts) run first by each generation of workers and not written: the first calls' one-time work")
	generations := flag.Int("generations", 20, "how many times each case's workers are started (the bursts are shared among them)")
	mode := flag.String("mode", "mixed", "mixed: every arm of a case in one worker process; separate: each arm in a process of its own")
	scale := flag.Float64("scale", 1, "multiplies each case's steps per round (mixed) or calls per burst (separate)")
	stepCalls := flag.Int("step-calls", 0, "calls per arm in one step of a round (0: each case's own)")
	only := flag.String("cases", "", "comma-separated case names (all when empty)")
	out := flag.String("out", "", "file to write the per-burst lines to (stdout when empty)")
	gogc := flag.String("gogc", "off", "GOGC of every arm's process")
	memlimit := flag.String("gomemlimit", "512MiB", "GOMEMLIMIT of every arm's process")
	procs := flag.Int("gomaxprocs", 0, "GOMAXPROCS of every arm's process (0: the runtime's default)")
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
	selected := cases
	if *only != "" {
		selected = nil
		for _, n := range strings.Split(*only, ",") {
			i := slices.IndexFunc(cases, func(c pairedCase) bool { return c.name == n })
			if i < 0 {
				log.Fatalf("paired: no case %q (cases: %s)", n, caseNames())
			}
			selected = append(selected, cases[i])
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
		if err := runCase(w, *bin, env, *mode == "mixed", c, steps, *generations, *warmup, *bursts, rng); err != nil {
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
			wk, err := startWorker(bin, env, c.name+"/mixed")
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
			fmt.Fprintf(w, "Paired/%s burst=%d arm=%s cpu-ns/op=%.1f gc-ns/op=%.1f wall-ns/op=%.1f B/op=%.0f gen=%d\n",
				c.name, written-1, a.name, r.cpu/n, r.gc/n, r.wall/n, r.alloc/n, gen)
		}
		aa = append(aa, got[1].cpu/got[0].cpu)
		tm = append(tm, got[3].cpu/((got[0].cpu+got[1].cpu)/2))
	}
	log.Printf("%s: %d bursts × %d calls per arm in %d generations, %s: median A/A %.3f, toolmw/bare %.3f (the report gives the intervals)",
		c.name, bursts, calls, gen+1, time.Since(start).Round(time.Second), median(aa), median(tm))
	return nil
}

// burst is one arm's answer to one burst: CPU time (the closing
// collection included), the collection's share, wall time and bytes
// allocated, for the whole burst.
type burst struct{ cpu, gc, wall, alloc float64 }

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
	if _, err := fmt.Sscanf(line, "cpu-ns=%g gc-ns=%g wall-ns=%g alloc-B=%g", &r.cpu, &r.gc, &r.wall, &r.alloc); err != nil {
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

func caseNames() string {
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
