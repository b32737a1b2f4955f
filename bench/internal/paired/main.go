// Command paired measures toolmw's end-to-end cost against the bare SDKs
// on CPU time, each arm in a process of its own, so that the verdicts can
// decide on a shared machine.
//
// Every burst runs each arm of a case once, in a new random order, as its
// own run of the bench test binary: one separately-run benchmark
// (BenchmarkSDK or BenchmarkMCPGo, one sub-benchmark) for a fixed number
// of calls. The benchmark reads its process's CPU time (getrusage: user and
// system, every thread, the garbage collector and the audit writer
// included) around its timed loop and reports it as cpu-ns/op. Every
// process has a heap of its own, so no arm pays for another's garbage, and
// the same collector settings: GOGC=off with GOMEMLIMIT=64MiB by default,
// so that every arm collects when its heap reaches the same size. With the
// default GOGC=100 the collector runs when the heap doubles its live size,
// and these servers' live heaps are a few MiB, near the runtime's 4 MiB
// minimum: an arm that keeps 1.5 MiB more (toolmw's audit queue) would
// collect half as often as bare, and look cheaper for it. The bare arm
// runs twice per burst (bare and bare2) for the A/A control. Ratios are taken within a burst, where
// the arms shared the machine's conditions, and their mean gets a 95%
// interval over the bursts.
//
// It writes one line per arm per burst:
//
//	Paired/<case> burst=<n> arm=<arm> cpu-ns/op=<ns>
//
// which bench/internal/report reads with -paired.
//
//	go test -c -o /tmp/bench.test ./bench
//	go run ./bench/internal/paired -bin /tmp/bench.test -bursts 30 -out bench/results/paired.txt
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A pairedCase is one SDK and transport: the benchmark prefix of its arms
// and how many calls one burst makes.
type pairedCase struct {
	name, prefix, own string
	calls             int
}

var cases = []pairedCase{
	// About a quarter of a second of calls per arm on a quiet 2-core
	// machine: short enough that the arms of a burst share its load.
	{"sdk-in-memory", "BenchmarkSDK/in-memory/", "sdk-mw", 600},
	{"sdk-http", "BenchmarkSDK/http-sessions=1/", "sdk-mw", 1200},
	{"mcpgo-in-process", "BenchmarkMCPGo/in-process/", "mcpgo-mw", 2500},
	{"mcpgo-http", "BenchmarkMCPGo/http-sessions=1/", "mcpgo-mw", 1200},
}

// arms of every burst: the metric name and the sub-benchmark it runs
// ("" is the case's own-middleware arm).
var arms = []struct{ name, sub string }{
	{"bare", "bare"},
	{"bare2", "bare"},
	{"own", ""},
	{"toolmw", "toolmw"},
}

var cpuField = regexp.MustCompile(`([0-9.]+) cpu-ns/op`)

func main() {
	bin := flag.String("bin", "", "the compiled bench test binary (go test -c ./bench)")
	bursts := flag.Int("bursts", 30, "bursts per case")
	scale := flag.Float64("scale", 1, "multiplies each case's calls per burst")
	only := flag.String("cases", "", "comma-separated case names (all when empty)")
	out := flag.String("out", "", "file to write the per-burst lines to (stdout when empty)")
	gogc := flag.String("gogc", "off", "GOGC of every arm's process")
	memlimit := flag.String("gomemlimit", "64MiB", "GOMEMLIMIT of every arm's process")
	flag.Parse()
	if *bin == "" {
		log.Fatal("paired: -bin is required: the path of `go test -c ./bench`'s binary")
	}
	if *bursts < 2 {
		log.Fatalf("paired: -bursts %d: at least 2 are needed for an interval", *bursts)
	}
	selected := cases
	if *only != "" {
		selected = nil
		for _, n := range strings.Split(*only, ",") {
			c, ok := caseNamed(n)
			if !ok {
				log.Fatalf("paired: no case %q (cases: %s)", n, caseNames())
			}
			selected = append(selected, c)
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
	// A fixed seed: the same sequence of orders in every run.
	rng := rand.New(rand.NewPCG(3, 4))
	order := make([]int, len(arms))
	for i := range order {
		order[i] = i
	}
	for _, c := range selected {
		calls := max(1, int(float64(c.calls)**scale))
		start := time.Now()
		ratios := map[string][]float64{}
		for b := range *bursts {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			cpu := make([]float64, len(arms))
			for _, j := range order {
				sub := arms[j].sub
				if sub == "" {
					sub = c.own
				}
				v, err := runArm(*bin, env, c.prefix+sub, calls)
				if err != nil {
					log.Fatalf("paired: %s burst %d arm %s: %v", c.name, b, arms[j].name, err)
				}
				cpu[j] = v
			}
			for j, a := range arms {
				fmt.Fprintf(w, "Paired/%s burst=%d arm=%s cpu-ns/op=%.1f\n", c.name, b, a.name, cpu[j])
			}
			ref := (cpu[0] + cpu[1]) / 2
			ratios["A/A"] = append(ratios["A/A"], cpu[1]/cpu[0])
			ratios["own"] = append(ratios["own"], cpu[2]/ref)
			ratios["toolmw"] = append(ratios["toolmw"], cpu[3]/ref)
		}
		keys := make([]string, 0, len(ratios))
		for k := range ratios {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var sum strings.Builder
		for _, k := range keys {
			m, h := meanCI(ratios[k])
			fmt.Fprintf(&sum, " %s %.3f±%.3f", k, m, h)
		}
		log.Printf("%s: %d bursts × %d calls in %s:%s", c.name, *bursts, calls, time.Since(start).Round(time.Second), sum.String())
	}
}

// runArm runs one sub-benchmark for calls calls in a process of its own
// and returns the cpu-ns/op it reports.
func runArm(bin string, env []string, bench string, calls int) (float64, error) {
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", "^"+anchored(bench)+"$",
		"-test.benchtime", strconv.Itoa(calls)+"x", "-test.count", "1", "-test.timeout", "5m")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%v: %s%s", err, outb, stderr.Bytes())
	}
	sc := bufio.NewScanner(bytes.NewReader(outb))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		if m := cpuField.FindStringSubmatch(line); m != nil {
			return strconv.ParseFloat(m[1], 64)
		}
	}
	return 0, fmt.Errorf("no cpu-ns/op line in the output of %s:\n%s", bench, outb)
}

// anchored turns a/b/c into a/$^b$/^c: -test.bench matches each level of
// a sub-benchmark name separately, and each level must match whole.
func anchored(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, "$/^")
}

func caseNamed(n string) (pairedCase, bool) {
	for _, c := range cases {
		if c.name == n {
			return c, true
		}
	}
	return pairedCase{}, false
}

func caseNames() string {
	var ns []string
	for _, c := range cases {
		ns = append(ns, c.name)
	}
	return strings.Join(ns, ", ")
}

// meanCI is the mean of q and the half-width of its 95% interval
// (Student's t, normal beyond 30 degrees of freedom is close enough for a
// progress line; the report computes the figures it judges itself).
func meanCI(q []float64) (mean, half float64) {
	for _, v := range q {
		mean += v
	}
	mean /= float64(len(q))
	var ss float64
	for _, v := range q {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(q)-1))
	return mean, 2.05 * sd / math.Sqrt(float64(len(q)))
}
