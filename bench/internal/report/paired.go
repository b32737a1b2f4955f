package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// pairedRuns are bench/internal/paired's figures: per case, per arm, the
// CPU time per call of each burst, in burst order, and the other figures
// of the bursts (gc-ns/op, wall-ns/op, B/op) per unit where written.
type pairedRuns struct {
	order []string
	cpu   map[string]map[string][]float64
	other map[string]map[string]map[string][]float64 // case, arm, unit
}

// parsePaired reads lines "Paired/<case> burst=<n> arm=<arm> cpu-ns/op=<ns>",
// optionally followed by more "<unit>=<value>" figures. A burst that lacks
// one of its arms (a run cut short) is dropped whole, so that every ratio
// is taken within one burst.
func parsePaired(r io.Reader) (*pairedRuns, error) {
	type key struct{ cs, burst string }
	bursts := map[key]map[string]map[string]float64{}
	var keys []key
	p := &pairedRuns{cpu: map[string]map[string][]float64{}, other: map[string]map[string]map[string][]float64{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		cs, ok := strings.CutPrefix(f[0], "Paired/")
		if !ok || len(f) < 4 {
			return nil, fmt.Errorf("paired results, line %d: want \"Paired/<case> burst=N arm=A cpu-ns/op=NS\", got %q", n, sc.Text())
		}
		burst, ok1 := strings.CutPrefix(f[1], "burst=")
		arm, ok2 := strings.CutPrefix(f[2], "arm=")
		v, ok3 := strings.CutPrefix(f[3], "cpu-ns/op=")
		ns, err := strconv.ParseFloat(v, 64)
		if !ok1 || !ok2 || !ok3 || err != nil || !(ns > 0) {
			return nil, fmt.Errorf("paired results, line %d: malformed %q", n, sc.Text())
		}
		figs := map[string]float64{"cpu-ns/op": ns}
		for _, kv := range f[4:] {
			u, v, ok := strings.Cut(kv, "=")
			x, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil {
				return nil, fmt.Errorf("paired results, line %d: malformed figure %q", n, kv)
			}
			figs[u] = x
		}
		k := key{cs, burst}
		if bursts[k] == nil {
			bursts[k] = map[string]map[string]float64{}
			keys = append(keys, k)
		}
		bursts[k][arm] = figs
		if p.cpu[cs] == nil {
			p.cpu[cs] = map[string][]float64{}
			p.other[cs] = map[string]map[string][]float64{}
			p.order = append(p.order, cs)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		arms := bursts[k]
		if !hasAll(arms) {
			continue
		}
		for _, a := range pairedArms {
			p.cpu[k.cs][a] = append(p.cpu[k.cs][a], arms[a]["cpu-ns/op"])
			if p.other[k.cs][a] == nil {
				p.other[k.cs][a] = map[string][]float64{}
			}
			for u, v := range arms[a] {
				if u != "cpu-ns/op" {
					p.other[k.cs][a][u] = append(p.other[k.cs][a][u], v)
				}
			}
		}
	}
	return p, nil
}

// hasAll reports whether a burst has a figure for each of pairedArms.
func hasAll[V any](arms map[string]V) bool {
	for _, a := range pairedArms {
		if _, ok := arms[a]; !ok {
			return false
		}
	}
	return true
}

// pairedArms are the arms of every burst: bare twice (the A/A control),
// the SDK's own recover-and-log middleware, and toolmw's full chain.
var pairedArms = []string{"bare", "bare2", "own", "toolmw"}

// pairedCase is one case's ratios, each taken within a burst.
type pairedCase struct {
	label                  string
	bursts                 int
	bare, toolmwCPU        float64 // median CPU per call
	aa, own, toolmw, vsOwn ci
	aaGen                  ci // A/A over the generations (processes), when there are enough of them
	generations            int
	gate                   ci // the A/A control the verdicts are gated on: see aaGate
	// genSD is the standard deviation of the processes' A/A means, and
	// genSDRounds what their rounds' spread alone predicts of it (see
	// processSpread), when there are enough processes.
	genSD, genSDRounds  float64
	withGC              ci // toolmw / bare with the collection after each burst
	sums                ci // toolmw / bare on the rounds' untrimmed sums (sum-ns/op), when written
	bytes               string
	bareVerdict, ownVer string
}

// aaGate is the A/A control a paired verdict is gated on: an interval
// centred on 1 that holds the A/A's whole interval. Two identical
// processes whose ratio sits off 1 show an error of the harness (one
// process luckier than its twin for its life) that the interval's width
// alone would not.
func aaGate(aa ci) ci {
	if aa.n == 0 || math.IsNaN(aa.lo) {
		return aa
	}
	e := math.Max(aa.hi-1, 1-aa.lo)
	return ci{mean: 1, lo: 1 - e, hi: 1 + e, n: aa.n}
}

// minGenerations is how many worker processes a case needs for its
// A/A to be judged over them too (see generationAA).
const minGenerations = 5

// generationAA is the A/A of each generation (one worker process): the
// trimmed mean of its rounds' bare2/bare ratios, in the order the
// generations first appear. gen is each round's generation. (Trimmed, not
// the ratio of sums: a round a spike of other load fell on would move its
// whole generation.)
func generationAA(bare, bare2, gen []float64) []float64 {
	var q []float64
	for _, r := range aaByGeneration(bare, bare2, gen) {
		q = append(q, newTrimmedCI(r, trimFraction).mean)
	}
	return q
}

// aaByGeneration is each generation's rounds' A/A (bare2 / bare), the
// generations in the order of their first round; gen is each round's.
func aaByGeneration(bare, bare2, gen []float64) [][]float64 {
	var out [][]float64
	at := map[float64]int{}
	for i, g := range gen {
		j, ok := at[g]
		if !ok {
			j = len(out)
			at[g] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], bare2[i]/bare[i])
	}
	return out
}

// processSpread returns the standard deviation of the processes' mean
// A/A (bare2 / bare over each process's rounds; gen is each round's
// process) and what the rounds' spread within the processes predicts of
// it: √(mean of each process's round variance over its rounds). A first
// well above the second says the two bare arms of one process differ for
// the process's life, so that more processes, not more rounds in each,
// narrow the A/A over the processes.
func processSpread(bare, bare2, gen []float64) (sd, predicted float64) {
	byGen := aaByGeneration(bare, bare2, gen)
	var means []float64
	var within float64
	for _, r := range byGen {
		m, v := meanVar(r)
		means = append(means, m)
		within += v / float64(len(r))
	}
	_, v := meanVar(means)
	return math.Sqrt(v), math.Sqrt(within / float64(len(byGen)))
}

// meanVar is q's mean and sample variance (0 for fewer than two values).
func meanVar(q []float64) (mean, variance float64) {
	for _, x := range q {
		mean += x
	}
	mean /= float64(len(q))
	if len(q) < 2 {
		return mean, 0
	}
	for _, x := range q {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(q)-1)
}

// widerGate is gate widened to hold aa's whole interval too.
func widerGate(gate, aa ci) ci {
	if aa.n == 0 || math.IsNaN(aa.lo) || math.IsNaN(gate.lo) {
		return gate
	}
	g := aaGate(aa)
	return ci{mean: 1, lo: math.Min(gate.lo, g.lo), hi: math.Max(gate.hi, g.hi), n: gate.n}
}

func judgePaired(name string, arms map[string][]float64, other map[string]map[string][]float64) pairedCase {
	c := pairedCase{label: interleavedLabels[name], bursts: len(arms["bare"])}
	if c.label == "" {
		c.label = name
	}
	var aa, own, tm, vsOwn []float64
	for i := range arms["bare"] {
		ref := (arms["bare"][i] + arms["bare2"][i]) / 2
		aa = append(aa, arms["bare2"][i]/arms["bare"][i])
		own = append(own, arms["own"][i]/ref)
		tm = append(tm, arms["toolmw"][i]/ref)
		vsOwn = append(vsOwn, arms["toolmw"][i]/arms["own"][i])
	}
	c.aa, c.own, c.toolmw, c.vsOwn = newTrimmedCI(aa, trimFraction), newTrimmedCI(own, trimFraction),
		newTrimmedCI(tm, trimFraction), newTrimmedCI(vsOwn, trimFraction)
	c.bare, c.toolmwCPU = median(slices.Concat(arms["bare"], arms["bare2"])), median(arms["toolmw"])
	c.gate = aaGate(c.aa)
	// The rounds of one worker process share whatever makes one of its
	// arms luckier than its twin for the process's life (where its objects
	// landed); the generations are independent. With enough of them, the
	// gate holds the A/A over the generations too (their trimmed mean and
	// its interval, as for the rounds).
	if gen := other["bare"]["gen"]; len(gen) == len(arms["bare"]) {
		q := generationAA(arms["bare"], arms["bare2"], gen)
		if c.generations = len(q); c.generations >= minGenerations {
			c.aaGen = newTrimmedCI(q, trimFraction)
			c.gate = widerGate(c.gate, c.aaGen)
			c.genSD, c.genSDRounds = processSpread(arms["bare"], arms["bare2"], gen)
		}
	}
	c.bareVerdict = atMost(c.toolmw, c.gate, bareLimit, bareMargin)
	c.ownVer = atMost(c.vsOwn, c.gate, 1, math.Max(c.own.mean-1, 0))
	if gc := other["bare"]["gc-ns/op"]; len(gc) == len(arms["bare"]) && len(other["bare2"]["gc-ns/op"]) == len(gc) && len(other["toolmw"]["gc-ns/op"]) == len(gc) {
		var q []float64
		for i := range gc {
			ref := (arms["bare"][i] + gc[i] + arms["bare2"][i] + other["bare2"]["gc-ns/op"][i]) / 2
			q = append(q, (arms["toolmw"][i]+other["toolmw"]["gc-ns/op"][i])/ref)
		}
		c.withGC = newTrimmedCI(q, trimFraction)
	}
	// The same judgement on the rounds' untrimmed sums, where they were
	// written: a verdict stands only as the less favourable of the two, so
	// that trimming a round's steps (which takes away a spike of other
	// load, but would also take away a cost of toolmw's that comes now and
	// then) can narrow the A/A but never move a verdict towards toolmw.
	sums, rest := map[string][]float64{}, map[string]map[string][]float64{}
	for _, a := range pairedArms {
		if v := other[a]["sum-ns/op"]; len(v) == len(arms["bare"]) {
			sums[a] = v
		}
		rest[a] = map[string][]float64{}
		for u, v := range other[a] {
			if u != "sum-ns/op" {
				rest[a][u] = v
			}
		}
	}
	if len(sums) == len(pairedArms) && c.bursts > 0 {
		s := judgePaired(name, sums, rest)
		c.sums = s.toolmw
		c.bareVerdict = worse(c.bareVerdict, s.bareVerdict)
		c.ownVer = worse(c.ownVer, s.ownVer)
	}
	if bb, tb := other["bare"]["B/op"], other["toolmw"]["B/op"]; len(bb) > 0 && len(tb) > 0 {
		c.bytes = num(median(bb)) + " → " + num(median(tb))
	}
	return c
}

// headline is the end-to-end verdicts: the paired table when the run
// has one, else the interleaved table.
func (p *page) headline() {
	p.b.WriteString("## toolmw against the bare SDK and the SDK's own middleware\n\n" +
		"tools/call end to end: one `echo` tool, a real client of the same SDK, loopback only. **bare** is the SDK alone,\n" +
		"**own mw** the SDK with the recover-and-log middleware users write today (go-sdk: a receiving middleware with\n" +
		"`recover` and one slog line per method; mcp-go: `WithRecovery` and `WithLogger`), **toolmw** the recommended\n" +
		"chain (audit rows to an async writer into a slog sink, Diagnostics, Normalize, Recover). The targets:\n\n" +
		"- **toolmw ≤ 1.03× bare** in CPU per call: within what a user cannot tell from the SDK alone;\n" +
		"- **toolmw < own mw**: scrubbing every error and keeping an audit row costs less than the logging a user adds anyway.\n\n")
	pr := p.r.paired
	if pr == nil || len(pr.order) == 0 {
		p.b.WriteString("This run has no paired figures (`bench/internal/paired`); the verdicts below are the interleaved\n" +
			"benchmark's, all arms in one process.\n\n")
		p.chart("interleaved", "interleaved ratios to bare with 95% intervals")
		p.interleavedTable()
		return
	}
	p.b.WriteString("Every arm of a case runs in one long-lived worker process (`bench/internal/paired`): each its own server\n" +
		"and client, set up in an order drawn anew for each process, GOMAXPROCS=1, GOGC=off and a memory limit, so no\n" +
		"collection falls inside a round. A **round** runs every arm 12–32 times for 8 calls (a step), in a new random\n" +
		"order each step, then collects the heap; an arm's figure is the process's CPU time (every thread: client, server,\n" +
		"the audit writer) over its steps, per call: the 20% trimmed mean of its steps times their number, so that the few\n" +
		"steps a preemption or an interrupt fell on do not move it. toolmw's audit writer takes a round's rows as one batch,\n" +
		"and the step that waits for it to be written counts whole, so toolmw pays for all its rows and no other arm does.\n" +
		"Ratios are taken within a round, to the mean of the two bare arms, and the worker is started again every few\n" +
		"rounds so that one arm's luck in where its objects landed averages out. Each ratio is the 20% trimmed mean over\n" +
		"the rounds with its 95% interval (Tukey–McLaughlin). **A/A** is the second bare arm over the first: the harness's\n" +
		"own error, over the rounds and over the worker processes (each process's trimmed mean). A verdict is **met** when\n" +
		"the whole interval is inside the target, **missed** when the mean is outside, and **inconclusive** when the A/A\n" +
		"(the interval centred on 1 that holds both A/A intervals whole: the width column) is wider than half the margin\n" +
		"judged (1.5% for ≤ 1.03) and the interval does not clear the limit by more than that. Each verdict is also judged on\n" +
		"the rounds' untrimmed sums (**steps summed**) and the less favourable of the two stands, so trimming can narrow\n" +
		"the A/A but never move a verdict towards toolmw. **with GC** adds back the collection after each round (shared\n" +
		"out by the bytes each arm allocated), and B/call is what a collector's cost follows.\n\n" +
		"Why so (at load 3–10, 60 rounds in 6 processes per figure, 2026-12-02): with two Ps every hand-off between a\n" +
		"client's and a server's goroutines wakes a thread that spins looking for work, 30–40% of a bare go-sdk call's CPU\n" +
		"time (224 against 137 µs) and its noisiest part; one P leaves the calls' own work. The A/A spread of one round was,\n" +
		"with two Ps and steps of 2–8 calls summed (this harness before), one P and steps of one call summed, and the same\n" +
		"trimmed: go-sdk in memory 2.3%, 2.8%, 1.8%; go-sdk HTTP 6.8%, 2.8%, 2.4%; mcp-go in process 2.9%, 1.5%, 0.9%; mcp-go\n" +
		"HTTP 9.2%, 3.5%, 2.7%. Longer steps are noisier (mcp-go in process, one P, trimmed: 1.2% with 1 call, 2.1% with 4,\n" +
		"5.2% with 16) for the same toolmw / bare (1.19). The processes differ little once the arms share one (the spread\n" +
		"of the processes' A/A is what their rounds' spread predicts, within 0.3%), so the rounds, not the processes, set the\n" +
		"width.\n\n" +
		"Why 8 calls a step and not 1 (2026-12-03, load 0.9–1.5): a step of one call makes every call of every arm follow\n" +
		"other servers' calls, and charges the arms that run more code of their own than the bare SDK (own mw's slog\n" +
		"handler; toolmw's adapter, chain and row) for bringing it back each time, which a server serving its own calls one\n" +
		"after another does not pay. On go-sdk, in `toolctx/mcpsdk`'s `BenchmarkLayersCPU` (320 calls per arm and round, 40\n" +
		"rounds), the synchronous-row arm over bare read 1.046, 1.037, 1.028, 1.013, 1.016, 1.012 with steps of 1, 2, 4, 8,\n" +
		"16, 32 calls, own mw 1.056, 1.045, 1.040, 1.028, 1.034, 1.035, the stack arm 0.957–0.960 throughout; yielding until\n" +
		"no goroutine is runnable before each step's CPU reading left them as they were (1.055–1.058 and 1.015–1.016 with 1\n" +
		"and 8), so it is not one arm's unfinished work falling in the next one's step. This harness read go-sdk in memory\n" +
		"1.049 and 1.006, go-sdk HTTP 1.057 and 1.018, mcp-go in process 1.141 and 1.137, mcp-go HTTP 1.095 and 1.089 with\n" +
		"steps of 1 and 8 (40 rounds each): mcp-go's arms share more of their code. From 8 calls on the ratio stops moving,\n" +
		"so 8 measures the steady state with the shortest step; the A/A widths below are what it costs. bench/run took\n" +
		"steps of one call until fa66d31.\n\n")
	g, ok := p.m.groupOf("paired")
	flags := ""
	if ok && g.bursts != "" && g.generations != "" {
		flags = " -bursts " + g.bursts + " -generations " + g.generations
	}
	p.f("```sh\ngo test -c -o /tmp/bench.test ./bench && go run ./bench/internal/paired -bin /tmp/bench.test%s\n```\n\n", flags)
	if ok {
		p.f("Load average during the paired run: %s → %s (%s s).\n\n", g.loadStart, g.loadEnd, g.seconds)
	}
	p.t.head("SDK / transport", "rounds", "A/A", "A/A per process", "A/A width", "bare CPU/call", "toolmw CPU/call",
		"own mw / bare", "toolmw / bare", "≤ 1.03", "toolmw / own mw", "< own mw", "with GC", "steps summed", "B/call bare → toolmw")
	var wide []pairedCase
	for _, n := range pr.order {
		if isSizeCase(n) {
			continue // the size table's (see growth)
		}
		c := judgePaired(n, pr.cpu[n], pr.other[n])
		if c.bursts == 0 {
			continue
		}
		if c.gate.width() > bareMargin/2 {
			wide = append(wide, c)
		}
		perProcess := "—"
		if c.generations >= minGenerations {
			perProcess = fmt.Sprintf("%s, %d processes", c.aaGen.String(), c.generations)
		}
		p.t.row(c.label, strconv.Itoa(c.bursts), c.aa.String(), perProcess, fmt.Sprintf("%.1f%%", 100*c.gate.width()),
			dur(c.bare), dur(c.toolmwCPU), c.own.String(), c.toolmw.String(), c.bareVerdict, c.vsOwn.String(), c.ownVer,
			c.withGC.String(), c.sums.String(), c.bytes)
	}
	p.b.WriteString("\n")
	for _, c := range wide {
		p.wideAA(c)
	}
	p.chart("interleaved", "interleaved ratios to bare with 95% intervals")
	p.b.WriteString("The chart is the interleaved benchmark (all arms in one process, called in turn; its table is in\n" +
		"[" + detailsLink + "details.md](" + detailsLink + "details.md)), a check on the paired verdicts from another method.\n\n")
}

// isSizeCase reports whether a paired case is one of the argument sizes'
// ("<case>@<size>"): shown in the size table, not judged.
func isSizeCase(name string) bool { return strings.Contains(name, "@") }

// worse is the less favourable of two verdicts on one target (a, the
// robust figure's, or b, the summed one's): missed, then inconclusive or
// not shown, then met. b is marked when it is the one that decides.
func worse(a, b string) string {
	rank := func(v string) int {
		switch {
		case v == verdictMissed:
			return 3
		case v == verdictNotShown || strings.HasPrefix(v, verdictInconclusive):
			return 2
		case v == verdictMet:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b + " (steps summed)"
	}
	return a
}

// wideAA says why a case's A/A is wider than half the ≤ 1.03 margin, and
// what that does to its verdicts.
func (p *page) wideAA(c pairedCase) {
	var b strings.Builder
	fmt.Fprintf(&b, "**Why the A/A of %s is %.1f%% wide, over the 1.5%% the ≤ 1.03 margin allows.** Over its rounds "+
		"the A/A reads %s; the width is that or, wider, the interval over its %d worker processes' means, %s.",
		c.label, 100*c.gate.width(), c.aa, c.generations, c.aaGen)
	if c.genSD > 0 && c.genSDRounds > 0 {
		ratio, crit := (c.genSD*c.genSD)/(c.genSDRounds*c.genSDRounds), chi2Upper95(c.generations-1)/float64(c.generations-1)
		fmt.Fprintf(&b, " Those means spread by %.2f%% (standard deviation), against %.2f%% that the spread of the rounds "+
			"within each process predicts (variance ratio %.2f; 95%% point of F(%d, ∞) %.2f)", 100*c.genSD, 100*c.genSDRounds,
			ratio, c.generations-1, crit)
		if ratio > crit {
			b.WriteString(": the two bare arms of one process (each its own server and client, set up anew in each " +
				"process) differ for the process's life, so more processes, not more rounds, would narrow it")
		} else {
			b.WriteString(": the processes differ no more than their rounds do, so more rounds would narrow it")
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, " A verdict within the width of its limit reads inconclusive; one whose mean is beyond its limit, or "+
		"whose interval clears it by more than the width, does not depend on it: here ≤ 1.03 reads %s and < own mw %s.",
		c.bareVerdict, c.ownVer)
	p.b.WriteString(wrapText(b.String(), 115))
	p.b.WriteString("\n\n")
}

// chi2Upper95 is the 95% point of the χ² distribution with k degrees of
// freedom, by Wilson and Hilferty's cube approximation (within 1% from
// k = 5 on).
func chi2Upper95(k int) float64 {
	f := float64(k)
	z := 2 / (9 * f)
	return f * math.Pow(1-z+1.6449*math.Sqrt(z), 3)
}

// wrapText breaks s at spaces into lines of at most width bytes (a
// longer word stands on its own line).
func wrapText(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
