package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines builds go test -bench output: one line per count of name, the
// units' values taken from each count in turn.
func lines(name string, iters int, units map[string][]float64) string {
	var b strings.Builder
	n := 0
	for _, v := range units {
		n = max(n, len(v))
	}
	for i := range n {
		fmt.Fprintf(&b, "%s-2 \t%d", name, iters)
		for _, u := range sortedKeys(units) {
			if i < len(units[u]) {
				fmt.Fprintf(&b, "\t%g %s", units[u][i], u)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func sortedKeys(m map[string][]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

// around returns n values scattered around mean by ±rel (a fixed,
// symmetric pattern, so the mean is exact).
func around(mean, rel float64, n int) []float64 {
	pattern := []float64{0, 1, -1, 0.5, -0.5, 0.25, -0.25}
	out := make([]float64, n)
	for i := range out {
		out[i] = mean * (1 + rel*pattern[i%len(pattern)])
	}
	return out
}

// rowOf returns the first table row of page whose first cell is first and
// whose cells include cell ("" for any), or "".
func rowOf(page, first, cell string) string {
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "| "+first+" |") && strings.Contains(l, "| "+cell) {
			return l
		}
	}
	return ""
}

func TestAtMostJudgesOnTheInterval(t *testing.T) {
	narrowAA := newCI([]float64{1.001, 0.999, 1.000, 1.002, 0.998, 1.000, 1.001, 0.999})
	require.Less(t, narrowAA.width(), 0.015, "the narrow A/A control must pass the gate")
	for _, c := range []struct {
		name string
		q    []float64
		want string
	}{
		{"met: the whole interval is at most 1.03", []float64{1.010, 1.012, 1.008, 1.011, 1.009, 1.010}, verdictMet},
		{"missed: the mean is above 1.03", []float64{1.060, 1.062, 1.058, 1.061, 1.059, 1.060}, verdictMissed},
		{"not shown: the mean is inside, the interval is not", []float64{1.000, 1.060, 0.990, 1.050, 1.020, 1.030}, verdictNotShown},
	} {
		assert.Equal(t, c.want, atMost(newCI(c.q), narrowAA, 1.03, 0.03), c.name)
	}
}

func TestAtMostIsInconclusiveWhenTheAAIsTooWide(t *testing.T) {
	// The A/A control spreads over several percent: wider than half of
	// the 3% margin, so a 1.01 cannot be told from a 1.04.
	wideAA := newCI([]float64{0.96, 1.04, 1.00, 0.98, 1.03, 0.99, 1.02, 0.97})
	require.Greater(t, wideAA.width(), 0.015, "the wide A/A control must fail the gate")
	q := newCI([]float64{1.010, 1.012, 1.008, 1.011, 1.009, 1.010})
	got := atMost(q, wideAA, 1.03, 0.03)
	assert.True(t, strings.HasPrefix(got, verdictInconclusive), "a met figure with a wide A/A must be inconclusive, got %q", got)
	assert.Contains(t, got, "> 1.5%", "the verdict says which gate it failed")

	// A figure far beyond the limit stands even so: no harness error of
	// the A/A's size explains 1.42.
	far := newCI([]float64{1.42, 1.43, 1.41, 1.42, 1.42, 1.43})
	assert.Equal(t, verdictMissed, atMost(far, wideAA, 1.03, 0.03), "a miss by far more than the A/A width is a miss")
	wellInside := newCI([]float64{0.80, 0.81, 0.79, 0.80, 0.80, 0.81})
	assert.Equal(t, verdictMet, atMost(wellInside, wideAA, 1.03, 0.03), "a figure inside by far more than the A/A width is met")

	// One count: no A/A interval at all.
	one := newCI([]float64{1.0})
	got = atMost(newCI([]float64{1.01}), one, 1.03, 0.03)
	assert.True(t, strings.HasPrefix(got, verdictInconclusive), "no interval, no verdict: got %q", got)
}

func TestAtLeast(t *testing.T) {
	assert.Equal(t, verdictMet, atLeast(newCI([]float64{0.97, 0.98, 0.99, 0.98}), 0.9), "whole interval above 0.9")
	assert.Equal(t, verdictMissed, atLeast(newCI([]float64{0.75, 0.76, 0.77, 0.76}), 0.9), "mean below 0.9")
	assert.Equal(t, verdictNotShown, atLeast(newCI([]float64{0.80, 1.00, 0.85, 0.99}), 0.9), "mean above, interval not")
	assert.Equal(t, verdictNone, atLeast(newCI(nil), 0.9), "no figures")
}

func TestInterleavedCaseJudgedWithCPUPerCall(t *testing.T) {
	const n = 7
	// Five arms, eight sessions: one op is one call on each session of
	// each arm, so CPU per call is cpu-ns/op over 40 (an op's wall time is
	// eight times the sum of the arms' wall per call).
	raw := lines("BenchmarkInterleaved/sdk-http-sessions=8", 1000, map[string][]float64{
		"ns/op":              around(8*(200_000+200_000+220_000+202_000+240_000), 0.001, n),
		cpuUnit:              around(12_000_000, 0.001, n),
		"bare-ns":            around(200_000, 0.001, n),
		"bare2-ns":           around(200_000, 0.001, n),
		"own-ns":             around(220_000, 0.001, n),
		"toolmw-ns":          around(202_000, 0.001, n),
		"toolmw-syncslog-ns": around(240_000, 0.001, n),
		"toolmw-cpu-ns":      around(150_000, 0, n),
	})
	r := parse(strings.NewReader(raw))
	c := judgeInterleaved(r, "BenchmarkInterleaved/sdk-http-sessions=8")
	assert.Equal(t, []string{"bare", "bare2", "own", "toolmw", "toolmw-syncslog"}, c.arms, "arms in the report's order")
	assert.InDelta(t, 300_000, c.cpuPerCall, 1, "CPU per call is cpu-ns/op over the five arms' eight calls")
	assert.InDelta(t, 212_400, c.wallPerCall, 1, "wall per call is ns/op over the five arms' eight calls")
	assert.Equal(t, n, c.counts, "counts")
	byArm := map[string]interleavedRow{}
	for _, row := range c.rows {
		byArm[row.arm] = row
	}
	assert.InDelta(t, 1.01, byArm["toolmw"].vsBare.mean, 1e-6, "toolmw over the mean of the two bare arms")
	assert.Equal(t, verdictMet, byArm["toolmw"].bareVerdict, "1.01 with a tight A/A is within 3%")
	assert.Equal(t, verdictMet, byArm["toolmw"].ownVer, "toolmw below own mw")
	assert.Equal(t, verdictMissed, byArm["toolmw-syncslog"].bareVerdict, "1.20 is not within 3%")
	assert.Equal(t, verdictMissed, byArm["toolmw-syncslog"].ownVer, "syncslog above own mw")
	assert.Empty(t, byArm["own"].bareVerdict, "the targets are toolmw's, not the SDK's own middleware's")

	page := render(r, meta{}, nil)
	assert.Contains(t, page, "go-sdk streamable HTTP, 8 sessions", "the case is named")
	assert.Contains(t, page, "300.0 µs (wall 212.4 µs)", "CPU per call next to wall per call")
	assert.Contains(t, renderDetails(r, meta{}, nil, ""), "**toolmw-syncslog**", "the details' arms table names every arm")
	assert.Contains(t, rowOf(page, "", "toolmw |"), "| 202.0 µs (CPU 150.0 µs) |", "an arm's own CPU per call, when reported, next to its wall time")
}

func TestDemoJudgedOnIssue15(t *testing.T) {
	const n = 7
	for _, c := range []struct {
		demo float64
		want string
	}{{102_000, verdictMet}, {106_000, verdictMissed}} {
		raw := lines("BenchmarkInterleaved/demo-http-sessions=8", 200, map[string][]float64{
			"ns/op":    around(8*(100_000+100_000+c.demo), 0.001, n),
			"bare-ns":  around(100_000, 0.001, n),
			"bare2-ns": around(100_000, 0.001, n),
			"demo-ns":  around(c.demo, 0.001, n),
		})
		cs := judgeInterleaved(parse(strings.NewReader(raw)), "BenchmarkInterleaved/demo-http-sessions=8")
		require.Len(t, cs.rows, 2, "bare and demo rows")
		assert.Equal(t, "demo", cs.rows[1].arm, "the demo arm")
		assert.Equal(t, c.want, cs.rows[1].bareVerdict, "demo at %.2f of bare's time per call against ≥ 0.97 of its throughput", c.demo/100_000)
		assert.Empty(t, cs.rows[1].ownVer, "no own-middleware arm, no verdict against it")
	}
}

func TestSessionsOf(t *testing.T) {
	assert.Equal(t, 8, sessionsOf("mcpgo-http-sessions=8"), "eight sessions")
	assert.Equal(t, 8, sessionsOf("demo-http-sessions=8"), "the demo's eight sessions")
	assert.Equal(t, 1, sessionsOf("sdk-in-memory"), "one session")
	assert.Equal(t, 1, sessionsOf("odd-sessions=x"), "not a number: one")
}

func TestInterleavedInconclusiveInThePage(t *testing.T) {
	const n = 8
	aaNoise := []float64{0.96, 1.04, 1.00, 0.98, 1.03, 0.99, 1.02, 0.97}
	bare2 := make([]float64, n)
	for i := range bare2 {
		bare2[i] = 100_000 * aaNoise[i]
	}
	raw := lines("BenchmarkInterleaved/mcpgo-in-process", 1000, map[string][]float64{
		"ns/op": around(400_000, 0, n), cpuUnit: around(400_000, 0, n),
		"bare-ns": around(100_000, 0, n), "bare2-ns": bare2,
		"own-ns": around(108_000, 0, n), "toolmw-ns": around(101_000, 0.001, n),
	})
	row := rowOf(render(parse(strings.NewReader(raw)), meta{}, nil), "", "toolmw")
	cells := strings.Split(row, " | ")
	require.Len(t, cells, 10, "the toolmw row: %s", row)
	assert.True(t, strings.HasPrefix(cells[7], "inconclusive (A/A width 4.8% > 1.5%)"), "a wide A/A gives no verdict on ≤ 1.03: %s", row)
	// toolmw / own mw is 0.935, below 1 by more than the A/A's width:
	// that verdict stands.
	assert.Equal(t, "met |", cells[9], "a verdict clear of the A/A's width stands: %s", row)
}

func TestChainTargetsOnTheRowThatDoesTheWork(t *testing.T) {
	chain := func(fullCPU float64) *results {
		raw := lines("BenchmarkChain/direct", 1000000, map[string][]float64{"ns/op": {3, 3, 3}, cpuUnit: {3, 3, 3}, "allocs/op": {0, 0, 0}}) +
			lines("BenchmarkChain/success", 1000000, map[string][]float64{"ns/op": {100, 100, 100}, cpuUnit: {100, 100, 100}, "allocs/op": {0, 0, 0}}) +
			lines("BenchmarkChain/full", 1000000, map[string][]float64{"ns/op": {140, 141, 139}, cpuUnit: {fullCPU, fullCPU, fullCPU}, "allocs/op": {0, 0, 0}})
		return parse(strings.NewReader(raw))
	}
	// Wall 140 ns, CPU 145: within 150 ns over direct on both.
	page := render(chain(145), meta{}, nil)
	full := rowOf(page, "full", "")
	assert.Contains(t, full, "≤ +150 ns", "the 150 ns target is on the full chain's row")
	assert.True(t, strings.HasSuffix(full, "| met |"), "full within 150 ns: %s", full)
	assert.NotContains(t, rowOf(page, "success", ""), "met", "success is not where the target is judged")
	assert.Contains(t, full, "145.0 ns | 1.04 |", "CPU per call and CPU/wall next to wall")

	// The same wall time, but the writer goroutine spends CPU on the
	// other core: 250 ns of CPU per call is charged, and misses.
	full = rowOf(render(chain(250), meta{}, nil), "full", "")
	assert.True(t, strings.HasSuffix(full, "| **missed** |"), "CPU per call is charged: %s", full)

	assert.Equal(t, verdictMissed, overheadAtMost(chainCost{140, 250}, chainCost{3, 3}, 0, 150, 0), "charged on CPU")
	assert.Equal(t, verdictMet, overheadAtMost(chainCost{140, math.NaN()}, chainCost{3, math.NaN()}, 0, 150, 0), "wall only when CPU is not reported")
	assert.Equal(t, verdictMissed, overheadAtMost(chainCost{100, 100}, chainCost{3, 3}, 1, 150, 0), "an allocation misses a 0-alloc target")
}

func TestCeilingIsJudgedOnItsPairs(t *testing.T) {
	raw := lines("BenchmarkCeiling/sqlite", 60, map[string][]float64{"ratio": {0.96}, "log-ratio-sd": {0.08},
		"driver-rows/s": {200000}, "toolmw-rows/s": {192000}, "driver-cpu-ns/row": {4000}, "toolmw-cpu-ns/row": {5000}}) +
		lines("BenchmarkCeiling/postgres", 10, map[string][]float64{"ratio": {0.91}, "log-ratio-sd": {0.2},
			"driver-rows/s": {400000}, "toolmw-rows/s": {364000}, "driver-cpu-ns/row": {1000}, "toolmw-cpu-ns/row": {2000},
			"driver-server-cpu-ns/row": {3000}, "toolmw-server-cpu-ns/row": {4000}}) +
		lines("BenchmarkAudit/postgres/throughput", 100000, map[string][]float64{"rows/s": {150000}, "cpu-ns/row": {2000}, "server-cpu-ns/row": {4000}, "rows/cpu-s": {166667}})
	r := parse(strings.NewReader(raw))
	f, ok := ceilingOf(r, "sqlite")
	require.True(t, ok, "the SQLite ceiling was run")
	h := 2.0 * 0.08 / math.Sqrt(60) // t(59) ≈ 2.000
	assert.InDelta(t, 0.96*math.Exp(-h), f.ratio.lo, 1e-3, "the interval is the pairs' logarithms' mean ± t·sd/√n")
	assert.InDelta(t, 0.96*math.Exp(h), f.ratio.hi, 1e-3, "and symmetric in the logarithms")
	assert.Equal(t, 60, f.ratio.n, "one pair per iteration")
	page := render(r, meta{}, nil)
	assert.Equal(t, "| sqlite | 60 | 200,000 | 192,000 | 0.960 (0.940–0.980) | met | 4.00 µs | 5.00 µs | 1.250 |",
		rowOf(page, "sqlite", "200,000"), "SQLite at 0.96 of its ceiling, wholly above 0.9")
	assert.Equal(t, "| postgres | 10 | 400,000 | 364,000 | 0.910 (0.789–1.050) | not shown | 1.00 µs + 3.00 µs server | 2.00 µs + 4.00 µs server | 1.500 |",
		rowOf(page, "postgres", "400,000"), "ten wide pairs cannot show 0.9; the server's CPU counted")
	assert.True(t, strings.HasPrefix(rowOf(page, "postgres", "150,000"), "| postgres | 150,000 |  | 2.00 µs | 4.00 µs | met |"),
		"the throughput row shows this process's and the server's CPU per row: %s", rowOf(page, "postgres", "150,000"))
	_, ok = ceilingOf(parse(strings.NewReader(lines("BenchmarkCeiling/sqlite/driver", 100000, map[string][]float64{"rows/s": {1}}))), "sqlite")
	assert.False(t, ok, "results from before the pairs have no ratio to judge")
}

func TestMetaGroupsGiveEachSectionItsLoad(t *testing.T) {
	m := parseMeta("Commit: abc123\n" +
		"Group ^BenchmarkChain$: benchtime=200ms counts=5 load=1.60 2.15 3.12 -> 1.66 2.00 2.94 seconds=23\n" +
		"Group ^BenchmarkInterleaved$: benchtime=1000x counts=15 load=2.10 2.00 2.90 -> 3.40 2.50 2.95 seconds=140\n")
	require.Len(t, m.groups, 2, "two groups")
	assert.Equal(t, group{regex: "^BenchmarkChain$", benchtime: "200ms", counts: "5", loadStart: "1.60 2.15 3.12", loadEnd: "1.66 2.00 2.94", seconds: "23"},
		m.groups[0], "a group line, parsed")
	pm := parseMeta("Group paired: bursts=240 generations=24 load=0.99 1.57 2.55 -> 1.02 1.20 2.07 seconds=250\n")
	assert.Equal(t, []group{{regex: "paired", bursts: "240", generations: "24", loadStart: "0.99 1.57 2.55", loadEnd: "1.02 1.20 2.07", seconds: "250"}},
		pm.groups, "the paired group's line, with its rounds and worker starts")
	assert.Equal(t, [][2]string{{"Commit", "abc123"}}, m.kv, "group lines are not plain meta lines")
	r := parse(strings.NewReader(
		lines("BenchmarkChain/direct", 1000, map[string][]float64{"ns/op": {3}}) +
			lines("BenchmarkInterleaved/sdk-in-memory", 1000, map[string][]float64{"ns/op": {4}, "bare-ns": {1}, "bare2-ns": {1}})))
	page := renderDetails(r, m, nil, "")
	assert.Contains(t, page, "| `^BenchmarkChain$` | 200ms | 5 | 1.60 2.15 3.12 | 1.66 2.00 2.94 | 23 |", "the details list every group with its load")
	inter := page[strings.Index(page, "### Interleaved"):]
	assert.Contains(t, inter, "`^BenchmarkInterleaved$` (1000x, 15 counts, 140 s): 2.10 2.00 2.90 → 3.40 2.50 2.95", "the interleaved section states its load")
	assert.NotContains(t, inter, "BenchmarkChain$`", "and not another section's")
}

func TestChartsAreDrawnFromTheResults(t *testing.T) {
	raw := ""
	for _, n := range []int{1, 2, 4, 8, 16} {
		raw += lines(fmt.Sprintf("BenchmarkGrowth/length/after/n=%d", n), 1000, map[string][]float64{"ns/op": {float64(90 * n)}, cpuUnit: {float64(95 * n)}})
	}
	for _, g := range []int{1, 8} {
		raw += lines(fmt.Sprintf("BenchmarkGrowth/concurrency/goroutines=%d", g), 1000, map[string][]float64{"ns/op": {400}, "dropped-%": {float64(g)}})
	}
	raw += lines("BenchmarkInterleaved/sdk-in-memory", 1000, map[string][]float64{
		"ns/op": {4, 4, 4}, "bare-ns": {100, 101, 99}, "bare2-ns": {100, 99, 101}, "toolmw-ns": {102, 103, 101}})
	dir := t.TempDir()
	files, err := drawCharts(parse(strings.NewReader(raw)), dir, "svg")
	require.NoError(t, err, "drawing")
	for _, name := range []string{"length", "concurrency", "interleaved"} {
		require.Contains(t, files, name, "chart %s drawn", name)
		b, err := os.ReadFile(files[name])
		require.NoError(t, err, "reading %s", name)
		assert.Contains(t, string(b), "<svg", "%s is an SVG", name)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "concurrency.svg"))
	assert.Contains(t, string(b), "8%", "the concurrency chart labels each point with its drops")
	assert.NotContains(t, files, "ceiling", "no ceiling figures, no ceiling chart")
	assert.NotContains(t, files, "size", "no size figures, no size chart")

	page := render(parse(strings.NewReader(raw)), meta{}, map[string]string{"interleaved": "bench/results/interleaved.svg"})
	assert.Contains(t, page, "![interleaved ratios to bare with 95% intervals](bench/results/interleaved.svg)", "the page links the chart")
}

func TestHandRunSectionsKept(t *testing.T) {
	old := "# old\nfigures\n" + handRunMarker + "\n## hand-run\nkept\n"
	assert.Equal(t, "\n"+handRunMarker+"\n## hand-run\nkept\n", handRun(old), "the hand-run part, marker included")
	assert.Empty(t, handRun("# no marker\n"), "nothing without the marker")
}

func TestThroughputMissedNamesTheDriversFigure(t *testing.T) {
	raw := lines("BenchmarkCeiling/postgres", 60, map[string][]float64{"driver-rows/s": {79000}, "ratio": {1}}) +
		lines("BenchmarkAudit/postgres/throughput", 100000, map[string][]float64{"rows/s": {96000}, "cpu-ns/row": {900}, "server-cpu-ns/row": {10000}}) +
		lines("BenchmarkAudit/sqlite/throughput", 100000, map[string][]float64{"rows/s": {120000}, "cpu-ns/row": {9000}})
	page := render(parse(strings.NewReader(raw)), meta{}, nil)
	i := strings.Index(page, "**postgres under 100,000 rows/s")
	require.GreaterOrEqual(t, i, 0, "a missed store gets its paragraph")
	para := strings.ReplaceAll(page[i:i+strings.Index(page[i:], "\n\n")], "\n", " ")
	assert.Contains(t, para, "reads 79,000 rows/s, itself under the target", "the driver's figure in the same run")
	assert.Contains(t, para, "one core of it serves at most 100,000 rows/s", "1 s over the server's 10 µs a row")
	assert.NotContains(t, page, "**sqlite under", "a store that met the target gets none")
}

func TestDurabilityIsJudgedOnItsPairs(t *testing.T) {
	raw := lines("BenchmarkDurability/sqlite", 20, map[string][]float64{"ratio": {0.84}, "log-ratio-sd": {0.07},
		"memory-calls/s": {3500}, "disk-calls/s": {2940}, "memory-p99-ns": {13e6}, "disk-p99-ns": {15e6},
		"memory-cpu-µs/call": {400}, "disk-cpu-µs/call": {470}})
	page := render(parse(strings.NewReader(raw)), meta{}, nil)
	h := 2.093 * 0.07 / math.Sqrt(20) // t(19)
	want := fmt.Sprintf("| sqlite | 20 | 3,500 | 2,940 | 0.840 (%.3f–%.3f) | met | 13.00 ms | 15.00 ms | 400.0 µs | 470.0 µs |", 0.84*math.Exp(-h), 0.84*math.Exp(h))
	assert.Equal(t, want, rowOf(page, "sqlite", "3,500"), "disk at 0.84 of memory over 20 pairs, wholly above 0.8")
	assert.Contains(t, rowOf(page, "postgres", "skipped"), "TOOLMW_TEST_POSTGRES_DSN unset", "a store not run says so")
}
