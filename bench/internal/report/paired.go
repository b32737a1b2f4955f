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
	bareVerdict, ownVer    string
}

func judgePaired(name string, arms map[string][]float64) pairedCase {
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
	c.bareVerdict = atMost(c.toolmw, c.aa, bareLimit, bareMargin)
	c.ownVer = atMost(c.vsOwn, c.aa, 1, math.Max(c.own.mean-1, 0))
	return c
}

// paired is the headline end-to-end table: toolmw against the bare SDK
// and the SDK's own middleware, each arm in its own process.
func (p *page) paired() {
	pr := p.r.paired
	if pr == nil || len(pr.order) == 0 {
		return
	}
	p.b.WriteString("### Paired processes (CPU per call)\n\n" +
		"`bench/internal/paired`: each arm of a case runs in a process of its own (its own heap and garbage\n" +
		"collector, the same GOGC and GOMEMLIMIT for all), one separately-run benchmark (`BenchmarkSDK` or\n" +
		"`BenchmarkMCPGo`, one session, the `echo` tool) for a fixed number of calls. A burst runs every arm once, in\n" +
		"a new random order; the arm's figure is its process's CPU time (getrusage: all threads, client, server,\n" +
		"collector and audit writer) over the timed loop, per call. Ratios are taken within a burst, to the mean of\n" +
		"the two bare runs, and the table gives their mean over the bursts with a 95% interval. **A/A** is the\n" +
		"second bare run over the first. Verdicts as in the interleaved table: toolmw ≤ 1.03 of bare, and below the\n" +
		"SDK's own recover-and-log middleware.\n\n")
	p.t.head("SDK / transport", "bursts", "A/A (bare2 / bare)", "A/A width", "bare CPU/call", "toolmw CPU/call",
		"own mw / bare", "toolmw / bare", "≤ 1.03", "toolmw / own mw", "< own mw")
	for _, n := range pr.order {
		c := judgePaired(n, pr.cpu[n])
		if c.bursts == 0 {
			continue
		}
		p.t.row(c.label, strconv.Itoa(c.bursts), c.aa.String(), fmt.Sprintf("%.1f%%", 100*c.aa.width()),
			dur(c.bare), dur(c.toolmwCPU), c.own.String(), c.toolmw.String(), c.bareVerdict, c.vsOwn.String(), c.ownVer)
	}
	p.b.WriteString("\n")
}
