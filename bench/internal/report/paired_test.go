package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pairedLines writes bursts of the four arms, toolmw at tm × bare and own
// at own × bare, with the bare level drifting from burst to burst (as the
// machine's load moves) and bare2 within ±jitter of bare.
func pairedLines(cs string, bursts int, own, tm, jitter float64) string {
	var b strings.Builder
	for i := range bursts {
		base := 100000 * (1 + 0.2*float64(i%5)) // the drift the pairing must cancel
		j := jitter
		if i%2 == 1 {
			j = -jitter
		}
		for _, a := range []struct {
			arm string
			v   float64
		}{{"bare", base}, {"bare2", base * (1 + j)}, {"own", base * own}, {"toolmw", base * tm}} {
			fmt.Fprintf(&b, "Paired/%s burst=%d arm=%s cpu-ns/op=%.1f\n", cs, i, a.arm, a.v)
		}
	}
	return b.String()
}

func TestPairedRatiosAreTakenWithinABurst(t *testing.T) {
	pr, err := parsePaired(strings.NewReader(pairedLines("sdk-in-memory", 20, 1.10, 1.01, 0.002)))
	require.NoError(t, err)
	c := judgePaired("sdk-in-memory", pr.cpu["sdk-in-memory"], pr.other["sdk-in-memory"])
	assert.Equal(t, 20, c.bursts)
	// The bare level moves by 80% across bursts; the ratios must not.
	assert.InDelta(t, 1.01, c.toolmw.mean, 0.003, "toolmw / bare is taken per burst")
	assert.Less(t, c.toolmw.width(), 0.01, "drift between bursts does not widen a paired interval")
	assert.Less(t, c.aa.width(), 0.015, "A/A of a 0.2%% jitter")
	assert.Equal(t, verdictMet, c.bareVerdict, "1.01 with a narrow A/A is within 1.03")
	assert.Equal(t, verdictMet, c.ownVer, "1.01 is below own mw's 1.10")

	pr, err = parsePaired(strings.NewReader(pairedLines("mcpgo-http", 20, 1.02, 1.08, 0.002)))
	require.NoError(t, err)
	c = judgePaired("mcpgo-http", pr.cpu["mcpgo-http"], pr.other["mcpgo-http"])
	assert.Equal(t, verdictMissed, c.bareVerdict, "1.08 is over 1.03")
	assert.Equal(t, verdictMissed, c.ownVer, "1.08 is above own mw's 1.02")
}

func TestPairedWideControlIsInconclusive(t *testing.T) {
	pr, err := parsePaired(strings.NewReader(pairedLines("sdk-http", 10, 1.05, 1.02, 0.05)))
	require.NoError(t, err)
	c := judgePaired("sdk-http", pr.cpu["sdk-http"], pr.other["sdk-http"])
	assert.Contains(t, c.bareVerdict, verdictInconclusive, "a 5%% A/A jitter cannot decide 1.02 against 1.03")
}

func TestPairedDropsIncompleteBursts(t *testing.T) {
	in := pairedLines("sdk-in-memory", 3, 1.1, 1.0, 0.001) +
		"Paired/sdk-in-memory burst=3 arm=bare cpu-ns/op=1000\n" // a run cut short
	pr, err := parsePaired(strings.NewReader(in))
	require.NoError(t, err)
	assert.Len(t, pr.cpu["sdk-in-memory"]["bare"], 3, "the burst without its other arms is dropped")
	assert.Len(t, pr.cpu["sdk-in-memory"]["toolmw"], 3)
}

func TestPairedRejectsMalformedLines(t *testing.T) {
	for _, in := range []string{
		"Paired/x burst=0 arm=bare\n",
		"Paired/x burst=0 arm=bare cpu-ns/op=abc\n",
		"Paired/x burst=0 arm=bare cpu-ns/op=-3\n",
		"Benchmark burst=0 arm=bare cpu-ns/op=3\n",
	} {
		_, err := parsePaired(strings.NewReader(in))
		assert.Error(t, err, "%q", in)
		if err != nil {
			assert.Contains(t, err.Error(), "line 1", "the error names the line of %q", in)
		}
	}
}

func TestPairedSectionInReport(t *testing.T) {
	r := parse(strings.NewReader(""))
	var err error
	r.paired, err = parsePaired(strings.NewReader(pairedLines("mcpgo-in-process", 12, 1.05, 1.01, 0.001)))
	require.NoError(t, err)
	page := render(r, meta{}, nil)
	assert.True(t, strings.HasPrefix(page[strings.Index(page, "\n## ")+1:], "## toolmw against the bare SDK"), "the paired verdicts are the first section")
	assert.Contains(t, page, "| mcp-go in-process | 12 |", "one row per case with its burst count")
	assert.Contains(t, page, "go run ./bench/internal/paired -bin /tmp/bench.test\n", "no group line: the command without rounds")
	page = render(r, parseMeta("Group paired: bursts=240 generations=24 load=1 2 3 -> 1 2 3 seconds=250\n"), nil)
	assert.Contains(t, page, "-bin /tmp/bench.test -bursts 240 -generations 24\n", "the command gives the run's rounds and worker starts")
	assert.Contains(t, page, "(250 s)", "and the group's time")
}

func TestTrimmedCIMatchesAHandComputation(t *testing.T) {
	// n = 10, g = 2: kept 3..8 (mean 5.5); winsorized 3 3 3 4 5 6 7 8 8 8,
	// mean 5.5, SS 2·6.25·3 + 2.25·2 + 0.25·2 = 42.5, s_w = √(42.5/9);
	// SE = s_w / (0.6·√10); t(5) = 2.571.
	c := newTrimmedCI([]float64{10, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.2)
	half := 2.571 * math.Sqrt(42.5/9) / (0.6 * math.Sqrt(10))
	assert.InDelta(t, 5.5, c.mean, 1e-12)
	assert.InDelta(t, 5.5-half, c.lo, 1e-9)
	assert.InDelta(t, 5.5+half, c.hi, 1e-9)
	assert.Equal(t, 10, c.n)
}

func TestTrimmedCIIgnoresOutliers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := make([]float64, 100)
	for i := range q {
		q[i] = 1 + 0.01*rng.NormFloat64()
	}
	clean := newTrimmedCI(q, trimFraction)
	for i := range 10 { // a tenth of the bursts hit by a spike of other load
		q[i*10] *= 1.5 + float64(i)
	}
	spiked, plain := newTrimmedCI(q, trimFraction), newCI(q)
	assert.InDelta(t, clean.mean, spiked.mean, 0.005, "spikes in 10%% of the bursts barely move a 20%% trimmed mean")
	assert.Less(t, spiked.width(), 2*clean.width(), "nor widen its interval much")
	assert.Greater(t, plain.width(), 10*spiked.width(), "while the plain mean's interval is useless")
}

// TestTrimmedCICoverage checks that the interval is honest: over many
// samples of a known distribution, about 95% of the intervals hold the
// true centre, with clean normal figures and with heavy-tailed ones.
func TestTrimmedCICoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name string
		draw func() float64
	}{
		{"normal", func() float64 { return 1 + 0.02*rng.NormFloat64() }},
		{"contaminated", func() float64 {
			if rng.Float64() < 0.1 { // symmetric spikes ten times as wide
				return 1 + 0.2*rng.NormFloat64()
			}
			return 1 + 0.02*rng.NormFloat64()
		}},
	} {
		const trials, n = 2000, 40
		held := 0
		for range trials {
			q := make([]float64, n)
			for i := range q {
				q[i] = tc.draw()
			}
			if c := newTrimmedCI(q, trimFraction); c.lo <= 1 && 1 <= c.hi {
				held++
			}
		}
		cover := float64(held) / trials
		assert.InDelta(t, 0.95, cover, 0.025, "%s: %.3f of the intervals hold the centre", tc.name, cover)
	}
}

func TestTrimmedCIFewFigures(t *testing.T) {
	assert.True(t, math.IsNaN(newTrimmedCI(nil, 0.2).mean))
	c := newTrimmedCI([]float64{1.5}, 0.2)
	assert.Equal(t, 1.5, c.mean)
	assert.True(t, math.IsNaN(c.lo), "one figure has no interval")
	assert.Equal(t, "1.500", c.String())
}

func TestPairedGateHoldsAnAAOffOne(t *testing.T) {
	// Two identical processes 2% apart for all their bursts, tightly: the
	// interval alone is 0.2% wide, but the harness is 2% off.
	g := aaGate(ci{mean: 1.02, lo: 1.019, hi: 1.021, n: 50})
	assert.InDelta(t, 0.042, g.width(), 1e-9, "the gate is centred on 1 and holds the A/A's whole interval")
	assert.Contains(t, atMost(ci{mean: 1.02, lo: 1.015, hi: 1.025, n: 50}, g, bareLimit, bareMargin), verdictInconclusive,
		"an A/A 2% off 1 cannot decide 1.02 against 1.03")
	g = aaGate(ci{mean: 1, lo: 0.996, hi: 1.004, n: 50})
	assert.InDelta(t, 0.008, g.width(), 1e-9, "an A/A centred on 1 keeps its width")
}

func TestPairedReadsTheExtraFigures(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		for _, a := range []struct {
			arm       string
			cpu, gc   float64
			bytesCall float64
		}{{"bare", 1000, 100, 20000}, {"bare2", 1000, 100, 20000}, {"own", 1100, 100, 20500}, {"toolmw", 1010, 110, 21000}} {
			fmt.Fprintf(&b, "Paired/mcpgo-in-process burst=%d arm=%s cpu-ns/op=%.1f gc-ns/op=%.1f wall-ns/op=900 B/op=%.0f\n", i, a.arm, a.cpu+float64(i%3), a.gc, a.bytesCall)
		}
	}
	pr, err := parsePaired(strings.NewReader(b.String()))
	require.NoError(t, err)
	c := judgePaired("mcpgo-in-process", pr.cpu["mcpgo-in-process"], pr.other["mcpgo-in-process"])
	assert.InDelta(t, 1120.0/1100, c.withGC.mean, 0.001, "toolmw / bare with each burst's collection added back")
	assert.Equal(t, "20,000 → 21,000", c.bytes)
	_, err = parsePaired(strings.NewReader("Paired/x burst=0 arm=bare cpu-ns/op=3 gc-ns/op\n"))
	assert.ErrorContains(t, err, "line 1")
}

// offsetProcesses writes 8 worker processes of 10 rounds each of
// sdk-http, toolmw at tm × bare: within a process bare2 is tightly 3%
// above or below bare (one arm luckier for the process's life).
func offsetProcesses(tm float64) string {
	var b strings.Builder
	round := 0
	for g := range 8 {
		off := 0.97
		if g%2 == 1 {
			off = 1.03
		}
		for i := range 10 {
			j := 1 + 0.001*float64(i%3)
			for _, a := range []struct {
				arm string
				v   float64
			}{{"bare", 1000}, {"bare2", 1000 * off * j}, {"own", 1100}, {"toolmw", 1000 * tm}} {
				fmt.Fprintf(&b, "Paired/sdk-http burst=%d arm=%s cpu-ns/op=%.2f gen=%d\n", round, a.arm, a.v, g)
			}
			round++
		}
	}
	return b.String()
}

func TestPairedGateHoldsTheGenerations(t *testing.T) {
	// offsetProcesses: pooled, the rounds look centred and narrower than
	// they are, as if 80 rounds were 80 independent figures; the
	// generations are 8.
	pr, err := parsePaired(strings.NewReader(offsetProcesses(1.01)))
	require.NoError(t, err)
	c := judgePaired("sdk-http", pr.cpu["sdk-http"], pr.other["sdk-http"])
	assert.Equal(t, 8, c.generations)
	assert.InDelta(t, 1.0, c.aaGen.mean, 0.002, "the generations average out")
	rounds := aaGate(c.aa)
	assert.Greater(t, c.gate.width(), 2*rounds.width(), "the gate holds the spread of the generations' A/A, wider than the rounds'")
	assert.Greater(t, c.gate.width(), 0.05, "eight processes ±3%% apart")
	assert.Contains(t, c.bareVerdict, verdictInconclusive, "processes 3% apart cannot decide 1.01 against 1.03")

	// The same rounds in too few generations: judged on the rounds alone.
	assert.InDeltaSlice(t, []float64{1.1, 0.9}, generationAA([]float64{1, 1, 2}, []float64{1.1, 1.1, 1.8}, []float64{0, 0, 1}), 1e-9)
	// One round a spike fell on does not move its generation.
	q := generationAA([]float64{1, 1, 1, 1, 1}, []float64{1, 1, 1, 1, 9}, []float64{0, 0, 0, 0, 0})
	assert.InDelta(t, 1, q[0], 1e-9, "the generation's A/A is trimmed")
}

func TestWiderGate(t *testing.T) {
	g := widerGate(ci{mean: 1, lo: 0.99, hi: 1.01, n: 100}, ci{mean: 1.01, lo: 0.995, hi: 1.025, n: 10})
	assert.InDelta(t, 0.975, g.lo, 1e-9, "centred on 1, holding the generations' interval")
	assert.InDelta(t, 1.025, g.hi, 1e-9)
	same := ci{mean: 1, lo: 0.99, hi: 1.01, n: 100}
	assert.Equal(t, same, widerGate(same, ci{mean: 1, lo: math.NaN(), hi: math.NaN(), n: 1}), "no interval over the generations: the gate stays")
}

// withSums adds to pairedLines' lines a sum-ns/op of each arm's figure
// times sum(arm).
func withSums(in string, sum func(arm string) float64) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(in), "\n") {
		f := strings.Fields(l)
		arm := strings.TrimPrefix(f[2], "arm=")
		var v float64
		fmt.Sscanf(strings.TrimPrefix(f[3], "cpu-ns/op="), "%g", &v)
		fmt.Fprintf(&b, "%s sum-ns/op=%.1f\n", l, v*sum(arm))
	}
	return b.String()
}

func TestPairedVerdictIsTheLessFavourableOfTrimmedAndSummed(t *testing.T) {
	// Trimmed, toolmw reads 1.01; summed over the steps (its cost that
	// comes now and then kept), 1.06.
	in := withSums(pairedLines("sdk-in-memory", 20, 1.10, 1.01, 0.002), func(arm string) float64 {
		if arm == "toolmw" {
			return 1.06 / 1.01
		}
		return 1
	})
	pr, err := parsePaired(strings.NewReader(in))
	require.NoError(t, err)
	c := judgePaired("sdk-in-memory", pr.cpu["sdk-in-memory"], pr.other["sdk-in-memory"])
	assert.InDelta(t, 1.01, c.toolmw.mean, 0.003, "the ratio shown is the trimmed figure's")
	assert.InDelta(t, 1.06, c.sums.mean, 0.003, "and the summed one next to it")
	assert.Equal(t, verdictMissed+" (steps summed)", c.bareVerdict, "1.06 summed is over 1.03: the verdict is the summed one's")
	assert.Equal(t, verdictMet, c.ownVer, "1.06 is still below own mw's 1.10 either way")

	in = withSums(pairedLines("sdk-in-memory", 20, 1.10, 1.01, 0.002), func(string) float64 { return 1 })
	pr, err = parsePaired(strings.NewReader(in))
	require.NoError(t, err)
	c = judgePaired("sdk-in-memory", pr.cpu["sdk-in-memory"], pr.other["sdk-in-memory"])
	assert.Equal(t, verdictMet, c.bareVerdict, "where the two agree, the verdict stands unmarked")
}

func TestSizeCasesAreTheSizeTableNotVerdicts(t *testing.T) {
	in := pairedLines("sdk-in-memory", 12, 1.05, 1.01, 0.001) +
		pairedLines("sdk-in-memory@10KB", 10, 1.02, 1.04, 0.001) +
		pairedLines("mcpgo-in-process@1MB", 6, 1.02, 1.10, 0.001)
	r := parse(strings.NewReader(""))
	var err error
	r.paired, err = parsePaired(strings.NewReader(in))
	require.NoError(t, err)
	page := render(r, meta{}, nil)
	verdicts := page[strings.Index(page, "| SDK / transport |"):]
	verdicts = verdicts[:strings.Index(verdicts, "\n\n")]
	assert.Contains(t, verdicts, "| go-sdk in-memory | 12 |", "the verdict case is judged")
	assert.NotContains(t, verdicts, "@", "the size cases are not verdicts")
	assert.Contains(t, page, "### Argument and result size", "the size table is in the page")
	assert.Contains(t, page, "| go-sdk in-memory | 10KB | 10 |", "go-sdk's 10 KB row with its rounds")
	assert.Contains(t, page, "| mcp-go in-process | 1MB | 6 |", "mcp-go's 1 MB row")
	assert.Contains(t, page, "1.040 (", "toolmw / bare at 10 KB, paired")

	dir := t.TempDir()
	files, err := drawCharts(r, dir, "svg")
	require.NoError(t, err)
	assert.Contains(t, files, "size", "the size chart is drawn from the paired size cases")
}

func TestWideAAIsExplained(t *testing.T) {
	// 8 processes whose bare arms sit 3% apart for their lives, their
	// rounds within 0.1% of each other; toolmw far over 1.03.
	pr, err := parsePaired(strings.NewReader(offsetProcesses(1.2)))
	require.NoError(t, err)
	c := judgePaired("sdk-http", pr.cpu["sdk-http"], pr.other["sdk-http"])
	assert.InDelta(t, 0.03*math.Sqrt(8.0/7), c.genSD, 0.001, "the processes' means spread by their ±3%% offsets (sample SD)")
	assert.Less(t, c.genSDRounds, 0.001, "their rounds alone predict a tenth of a percent")
	r := parse(strings.NewReader(""))
	r.paired = pr
	page := render(r, meta{}, nil)
	why := page[strings.Index(page, "**Why the A/A of go-sdk streamable HTTP"):]
	why = strings.ReplaceAll(why[:strings.Index(why, "\n\n")], "\n", " ")
	assert.Contains(t, why, "over its 8 worker processes' means", "the paragraph names the processes")
	assert.Contains(t, why, "more processes, not more rounds, would narrow it", "a process effect, told as one")
	assert.Contains(t, why, "≤ 1.03 reads **missed**", "and the verdict that stands")

	narrow, err := parsePaired(strings.NewReader(pairedLines("sdk-http", 40, 1.05, 1.01, 0.001)))
	require.NoError(t, err)
	r.paired = narrow
	assert.NotContains(t, render(r, meta{}, nil), "**Why the A/A", "a narrow A/A needs no word")
}

func TestChi2Upper95(t *testing.T) {
	// Tabled 95% points of χ²(k).
	for k, want := range map[int]float64{10: 18.307, 27: 40.113, 100: 124.342} {
		assert.InDelta(t, want, chi2Upper95(k), want*0.005, "χ²(%d)", k)
	}
}

func TestWrapText(t *testing.T) {
	assert.Equal(t, "aa bb\ncc\nlongword\ndd", wrapText("aa  bb cc longword dd", 5), "lines of at most 5 bytes, a longer word alone")
}
