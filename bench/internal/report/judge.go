package main

import (
	"fmt"
	"math"
	"slices"
)

// ci is the mean of a set of per-count figures (ratios, mostly) with its
// 95% confidence interval (Student's t). lo and hi are NaN with fewer than
// two figures; everything is NaN with none.
type ci struct {
	mean, lo, hi float64
	n            int
}

func newCI(q []float64) ci {
	m, h := meanCI(q)
	return ci{mean: m, lo: m - h, hi: m + h, n: len(q)}
}

// width is hi − lo: how far apart two figures the interval cannot tell
// apart are (NaN without an interval).
func (c ci) width() float64 { return c.hi - c.lo }

func (c ci) String() string {
	switch {
	case c.n == 0:
		return "—"
	case math.IsNaN(c.lo):
		return fmt.Sprintf("%.3f", c.mean)
	}
	return fmt.Sprintf("%.3f (%.3f–%.3f)", c.mean, c.lo, c.hi)
}

// meanCI is the mean of q and the half-width of its 95% confidence
// interval (Student's t; NaN with fewer than two values).
func meanCI(q []float64) (mean, half float64) {
	if len(q) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range q {
		mean += v
	}
	mean /= float64(len(q))
	if len(q) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, v := range q {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(q)-1))
	return mean, tQuantile975(len(q)-1) * sd / math.Sqrt(float64(len(q)))
}

// tQuantile975 is the 97.5th percentile of Student's t with df degrees of
// freedom.
func tQuantile975(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df <= len(table) {
		return table[df-1]
	}
	return 1.96 + 2.4/float64(df) // within 0.005 of the exact value for df > 30
}

// The verdicts a target can get.
const (
	verdictMet          = "met"
	verdictMissed       = "**missed**"
	verdictNotShown     = "not shown"
	verdictInconclusive = "inconclusive"
	verdictNone         = "—"
)

// atMost judges the target "q ≤ limit" on an interleaved comparison, where
// aa is the A/A control (bare2 / bare) of the same counts and margin is the
// room the target is about (0.03 for "within 3% of bare").
//
// The A/A interval says how far apart two identical servers measure. When
// it is wider than half the margin, the harness cannot resolve the
// target: the verdict is "inconclusive", unless q's whole interval is
// farther from the limit, on one side, than the A/A's width (then no
// harness error of that size explains it, and the verdict stands).
// Otherwise: met when q's whole interval is at most limit, not shown when
// only its mean is, missed when its mean is above.
func atMost(q, aa ci, limit, margin float64) string {
	if q.n == 0 || math.IsNaN(q.mean) {
		return verdictNone
	}
	if w := aa.width(); !(w <= margin/2) {
		switch {
		case q.lo-limit > w:
			return verdictMissed
		case limit-q.hi > w:
			return verdictMet
		case math.IsNaN(w):
			return verdictInconclusive + " (no A/A interval)"
		}
		return fmt.Sprintf("%s (A/A width %.1f%% > %.1f%%)", verdictInconclusive, 100*w, 100*margin/2)
	}
	switch {
	case q.mean > limit:
		return verdictMissed
	case math.IsNaN(q.hi) || q.hi > limit:
		return verdictNotShown
	}
	return verdictMet
}

// atLeast judges "q ≥ limit" where there is no A/A control (a writer over
// its driver's ceiling, measured in alternating counts): met when the
// whole interval is at least limit, not shown when only the mean is,
// missed otherwise.
func atLeast(q ci, limit float64) string {
	switch {
	case q.n == 0 || math.IsNaN(q.mean):
		return verdictNone
	case q.mean < limit:
		return verdictMissed
	case math.IsNaN(q.lo) || q.lo < limit:
		return verdictNotShown
	}
	return verdictMet
}

// chainCost is one BenchmarkChain row's cost per call: wall time, and the
// process's CPU time (all goroutines: the async writer's too) when the row
// reports it.
type chainCost struct {
	wall, cpu float64 // ns per call; cpu is NaN when not reported
}

// charged is what a call costs for judging a target: the larger of wall
// and CPU time, so that work moved to another goroutine (the audit
// writer, on the second core) is charged to the call as well.
func (c chainCost) charged() float64 {
	if math.IsNaN(c.cpu) {
		return c.wall
	}
	return max(c.wall, c.cpu)
}

// overheadAtMost judges "row adds at most limit ns and maxAllocs allocs
// over ref": on the charged cost of each (medians over the counts).
func overheadAtMost(row, ref chainCost, allocs, limit, maxAllocs float64) string {
	d := row.charged() - ref.charged()
	switch {
	case math.IsNaN(d):
		return verdictNone
	case d <= limit && allocs <= maxAllocs:
		return verdictMet
	}
	return verdictMissed
}

// perCall is CPU per call from a row's cpu-ns/op when one op is calls
// calls (BenchmarkInterleaved: one call to each arm per op).
func perCall(cpuPerOp float64, calls int) float64 {
	if calls <= 0 {
		return math.NaN()
	}
	return cpuPerOp / float64(calls)
}

// trimFraction is the share of the per-burst ratios trimmed from each
// end before averaging them (the paired table): a burst that a spike of
// the machine's other load fell on moves a mean by its whole size, and a
// 20% trimmed mean not at all, while for well-behaved figures it is
// nearly as efficient as the mean (Wilcox, Introduction to Robust
// Estimation and Hypothesis Testing, ch. 3).
const trimFraction = 0.2

// newTrimmedCI is the trimmed mean of q (trim from each end) with its 95%
// interval after Tukey and McLaughlin: the standard error is the
// winsorized standard deviation over (1 − 2·trim)·√n, and Student's t has
// n − 2g − 1 degrees of freedom, g = ⌊trim·n⌋ being the figures trimmed
// from each end. With fewer than 2 figures left its bounds are NaN, as in
// newCI.
func newTrimmedCI(q []float64, trim float64) ci {
	n := len(q)
	if n == 0 {
		return ci{mean: math.NaN(), lo: math.NaN(), hi: math.NaN()}
	}
	s := slices.Clone(q)
	slices.Sort(s)
	g := int(math.Floor(trim * float64(n)))
	kept := s[g : n-g]
	var mean float64
	for _, v := range kept {
		mean += v
	}
	mean /= float64(len(kept))
	df := n - 2*g - 1
	if df < 1 {
		return ci{mean: mean, lo: math.NaN(), hi: math.NaN(), n: n}
	}
	// Winsorize: the g lowest become the lowest kept, the g highest the
	// highest kept.
	w := slices.Clone(s)
	for i := range g {
		w[i], w[n-1-i] = s[g], s[n-1-g]
	}
	var wm float64
	for _, v := range w {
		wm += v
	}
	wm /= float64(n)
	var ss float64
	for _, v := range w {
		ss += (v - wm) * (v - wm)
	}
	sw := math.Sqrt(ss / float64(n-1))
	half := tQuantile975(df) * sw / ((1 - 2*float64(g)/float64(n)) * math.Sqrt(float64(n)))
	return ci{mean: mean, lo: mean - half, hi: mean + half, n: n}
}
