// Command report turns the raw output of bench/run (go test -bench lines,
// several counts per benchmark) into BENCHMARKS.md: the median of each
// figure, the spread of the counts, ratios to the bare SDK and each figure
// next to its target.
//
//	go run ./bench/internal/report -in raw.txt -meta meta.txt -out BENCHMARKS.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "", "raw go test -bench output")
	meta := flag.String("meta", "", "file of 'key: value' lines describing the run")
	extra := flag.String("benchstat", "", "optional benchstat output to append")
	out := flag.String("out", "BENCHMARKS.md", "where to write the report")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	res := parse(f)
	f.Close()
	var m [][2]string
	if *meta != "" {
		m = readMeta(*meta)
	}
	var bs string
	if *extra != "" {
		if b, err := os.ReadFile(*extra); err == nil {
			bs = string(b)
		}
	}
	report := render(res, m, bs)
	if old, err := os.ReadFile(*out); err == nil {
		report += handRun(string(old))
	}
	if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
		log.Fatal(err)
	}
}

// handRunMarker starts the part of BENCHMARKS.md that bench/run does not
// produce: sections measured by hand with the commands they give (the
// guards, the audit spool, OpenTelemetry). The report keeps it as it is.
const handRunMarker = "<!-- Hand-run sections below: bench/run keeps them as they are. -->"

// handRun returns the hand-run part of an earlier report, marker included,
// or "" when it has none.
func handRun(old string) string {
	i := strings.Index(old, handRunMarker)
	if i < 0 {
		return ""
	}
	return "\n" + old[i:]
}

// results maps a benchmark name (without the -GOMAXPROCS suffix) to its
// samples per unit, in the order seen.
type results struct {
	order []string
	vals  map[string]map[string][]float64
}

var procSuffix = regexp.MustCompile(`-\d+$`)

func parse(r io.Reader) *results {
	res := &results{vals: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		iters, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		name := procSuffix.ReplaceAllString(f[0], "")
		units := res.vals[name]
		if units == nil {
			units = map[string][]float64{}
			res.vals[name] = units
			res.order = append(res.order, name)
		}
		units["iterations"] = append(units["iterations"], float64(iters))
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			units[f[i+1]] = append(units[f[i+1]], v)
		}
	}
	return res
}

// med returns the median of name's unit, and whether there was one.
func (r *results) med(name, unit string) (float64, bool) {
	v := r.vals[name][unit]
	if len(v) == 0 {
		return math.NaN(), false
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// spread is (max-min)/median in percent: how far apart the counts were.
func (r *results) spread(name, unit string) string {
	v := r.vals[name][unit]
	m, ok := r.med(name, unit)
	if !ok || len(v) < 2 || m == 0 {
		return ""
	}
	return fmt.Sprintf("±%.0f%%", 100*(slices.Max(v)-slices.Min(v))/m/2)
}

// ratios returns, for each count, num over the mean of dens, each taken
// from the same line.
func (r *results) ratios(name, num string, dens ...string) []float64 {
	n := r.vals[name][num]
	var q []float64
	for i := range n {
		var sum float64
		for _, d := range dens {
			v := r.vals[name][d]
			if i >= len(v) {
				return q
			}
			sum += v[i]
		}
		if sum != 0 {
			q = append(q, n[i]*float64(len(dens))/sum)
		}
	}
	return q
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

// interval formats q's mean and 95% confidence interval.
func interval(q []float64) string {
	m, h := meanCI(q)
	if math.IsNaN(m) {
		return "—"
	}
	if math.IsNaN(h) {
		return fmt.Sprintf("%.3f", m)
	}
	return fmt.Sprintf("%.3f (%.3f–%.3f)", m, m-h, m+h)
}

// bound judges "q is at most limit": met when q's whole 95% interval is,
// not shown when only its mean is, missed otherwise.
func bound(q []float64, limit float64) string {
	m, h := meanCI(q)
	switch {
	case math.IsNaN(m):
		return "—"
	case m > limit:
		return "**missed**"
	case math.IsNaN(h) || m+h > limit:
		return "not shown"
	}
	return "met"
}

func (r *results) count(name string) int {
	n := 0
	for _, v := range r.vals[name] {
		n = max(n, len(v))
	}
	return n
}

func readMeta(path string) [][2]string {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var out [][2]string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// num formats a figure with a sensible precision.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return commas(int64(math.Round(v)))
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// dur formats nanoseconds.
func dur(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "—"
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.1f ns", ns)
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

type table struct {
	b *strings.Builder
}

func (t table) head(cols ...string) {
	fmt.Fprintf(t.b, "| %s |\n|", strings.Join(cols, " | "))
	for range cols {
		t.b.WriteString("---|")
	}
	t.b.WriteString("\n")
}

func (t table) row(cells ...string) { fmt.Fprintf(t.b, "| %s |\n", strings.Join(cells, " | ")) }

func render(r *results, meta [][2]string, benchstat string) string {
	var b strings.Builder
	t := table{&b}
	b.WriteString("# toolmw benchmarks\n\n")
	b.WriteString("Generated by `bench/run` (bench/internal/report) — do not edit by hand above the hand-run marker near the end. Each figure is the\n" +
		"**median** of the counts shown in the run; `±` is half the range of the counts (max−min)/2 over the\n" +
		"median, a plain measure of how noisy the machine was. Lower is better for times, higher for rates.\n\n")
	for _, kv := range meta {
		fmt.Fprintf(&b, "- **%s:** %s\n", kv[0], kv[1])
	}
	b.WriteString("\n")

	b.WriteString("How to read the figures:\n\n" +
		"- `middleware.After` (and so the audit interceptor) reads the monotonic clock twice per call; `clock2` is what\n" +
		"  that costs on this machine, and it is most of `success` over `direct` (issue 2 assumed about 90 ns).\n" +
		"- The end-to-end sub-benchmarks run each server's counts at different moments; on a shared machine their\n" +
		"  ratios move by more than the 3% being tested. They also favour toolmw: its audit queue's preallocated\n" +
		"  slots (about 2.3 MB with the default 8192) raise a small benchmark process's live heap, so the collector\n" +
		"  runs less often while the SDK allocates hundreds of KB per call. The interleaved table (one heap for all\n" +
		"  servers, an A/A control, a confidence interval) is the one to judge by.\n" +
		"- `enqueue` times include pacing waits: read its percentiles, not its ns/op. Its allocs are the writer's\n" +
		"  (the database driver's), counted process-wide.\n" +
		"- Under the Drop policy a single writer goroutine cannot keep up with 2+ producers saturating both cores\n" +
		"  with a no-op tool: the concurrency table's drops are that policy working, and the dropped calls are cheaper.\n\n")

	// Chain.
	b.WriteString("## The chain around a trivial handler\n\n")
	b.WriteString("`BenchmarkChain`: After (no-op hook) + Diagnostics + Normalize + Recover around a handler returning a\n" +
		"preallocated result; `audit` is the audit interceptor into an async writer (Drop, discarding sink) and\n" +
		"`audit-baseline` the same with After's no-op hook instead; `audit-reserved-meta` is `audit` on a request whose\n" +
		"_meta holds only the three `io.modelcontextprotocol/` keys a 2026-07-28 client adds to every call; `full` is the recommended chain, audit outermost.\n\n")
	t.head("case", "time/call", "±", "B/call", "allocs/call", "vs. reference", "target (issue)", "")
	direct, _ := r.med("BenchmarkChain/direct", "ns/op")
	abase, _ := r.med("BenchmarkChain/audit-baseline", "ns/op")
	for _, c := range []string{"direct", "clock2", "success", "public-error", "raw-error", "panic", "audit-baseline", "audit", "audit-reserved-meta", "full"} {
		name := "BenchmarkChain/" + c
		ns, ok := r.med(name, "ns/op")
		if !ok {
			continue
		}
		bop, _ := r.med(name, "B/op")
		al, _ := r.med(name, "allocs/op")
		ref, target, v := "", "", ""
		switch c {
		case "success":
			ref = "+" + dur(ns-direct) + " over direct"
			target, v = "≤ +150 ns, 0 allocs (2)", verdict(ns-direct <= 150 && al == 0)
		case "raw-error":
			target, v = "≤ 1.5 µs (2)", verdict(ns <= 1500)
		case "public-error", "panic":
			ref = "+" + dur(ns-direct) + " over direct"
		case "audit":
			ref = "+" + dur(ns-abase) + " over audit-baseline"
			target, v = "≤ +100 ns, 0 allocs (3)", verdict(ns-abase <= 100 && al == 0)
		case "audit-reserved-meta":
			ref = "+" + dur(ns-abase) + " over audit-baseline"
		case "full":
			ref = "+" + dur(ns-direct) + " over direct"
		}
		t.row(c, dur(ns), r.spread(name, "ns/op"), num(bop), num(al), ref, target, v)
	}
	b.WriteString("\n")

	// End to end.
	b.WriteString("## tools/call end to end\n\n")
	b.WriteString("One typed/native `echo` tool, a real client of the same SDK, loopback only. Three servers measured in the\n" +
		"same run: **bare** SDK; the SDK with **its own** recovery and logging (go-sdk: a receiving middleware with a\n" +
		"deferred recover and one slog line per method, after the SDK's examples/server/middleware; mcp-go:\n" +
		"`server.WithRecovery()` + `server.WithLogger`, text handler into io.Discard); and **toolmw**'s full chain\n" +
		"(audit.Interceptor into an async writer with a slog sink, Diagnostics, Normalize, Recover). Time/call is\n" +
		"wall time per call (with 8 sessions, across all of them). Ratios are to the bare SDK's median.\n" +
		"Issue 4's targets: toolmw within 3% of bare (ratio ≤ 1.03), and its overhead below the SDK's own middleware.\n\n")
	t.head("SDK / transport", "bare", "own mw", "toolmw", "own mw / bare", "toolmw / bare", "calls/s bare → toolmw", "allocs bare / own / toolmw", "≤ 1.03", "< own mw")
	for _, g := range []struct{ label, prefix, own string }{
		{"go-sdk in-memory", "BenchmarkSDK/in-memory/", "sdk-mw"},
		{"go-sdk streamable HTTP, 1 session", "BenchmarkSDK/http-sessions=1/", "sdk-mw"},
		{"go-sdk streamable HTTP, 8 sessions", "BenchmarkSDK/http-sessions=8/", "sdk-mw"},
		{"mcp-go in-process", "BenchmarkMCPGo/in-process/", "mcpgo-mw"},
		{"mcp-go streamable HTTP, 1 session", "BenchmarkMCPGo/http-sessions=1/", "mcpgo-mw"},
		{"mcp-go streamable HTTP, 8 sessions", "BenchmarkMCPGo/http-sessions=8/", "mcpgo-mw"},
	} {
		bare, ok := r.med(g.prefix+"bare", "ns/op")
		if !ok {
			continue
		}
		own, _ := r.med(g.prefix+g.own, "ns/op")
		tm, _ := r.med(g.prefix+"toolmw", "ns/op")
		cb, _ := r.med(g.prefix+"bare", "calls/s")
		ct, _ := r.med(g.prefix+"toolmw", "calls/s")
		ab, _ := r.med(g.prefix+"bare", "allocs/op")
		ao, _ := r.med(g.prefix+g.own, "allocs/op")
		at, _ := r.med(g.prefix+"toolmw", "allocs/op")
		t.row(g.label,
			dur(bare)+" "+r.spread(g.prefix+"bare", "ns/op"),
			dur(own)+" "+r.spread(g.prefix+g.own, "ns/op"),
			dur(tm)+" "+r.spread(g.prefix+"toolmw", "ns/op"),
			fmt.Sprintf("%.3f", own/bare), fmt.Sprintf("%.3f", tm/bare),
			num(cb)+" → "+num(ct), num(ab)+" / "+num(ao)+" / "+num(at),
			verdict(tm/bare <= 1.03), verdict(tm < own))
	}
	b.WriteString("\n")

	b.WriteString("### Interleaved\n\n`BenchmarkInterleaved`: four servers of one SDK and transport in one process (one heap, one\n" +
		"garbage collector) — bare, bare again, own mw, toolmw — called in a new random order in every round of\n" +
		"the same loop, so the machine's other load and the collector's cycles fall on all four alike. Each count\n" +
		"gives each server's mean time per call; the ratios are taken per count, to the mean of the two bare\n" +
		"servers, and the table shows their mean over the counts with a 95% confidence interval (Student's t).\n" +
		"**A/A** is the second bare server over the first: two identical servers, so its distance from 1.000 is the\n" +
		"harness's own error. A target is **met** when the whole interval is inside it, **not shown** when the\n" +
		"mean is inside and the interval is not, and **missed** when the mean is outside. This is the figure to\n" +
		"read for issue 4's targets.\n\n")
	t.head("SDK / transport", "counts", "bare", "A/A (bare2 / bare)", "own mw / bare", "toolmw / bare", "toolmw / own mw", "≤ 1.03", "< own mw")
	for _, g := range []struct{ label, name string }{
		{"go-sdk in-memory", "BenchmarkInterleaved/sdk-in-memory"},
		{"go-sdk streamable HTTP, 1 session", "BenchmarkInterleaved/sdk-http"},
		{"mcp-go in-process", "BenchmarkInterleaved/mcpgo-in-process"},
		{"mcp-go streamable HTTP, 1 session", "BenchmarkInterleaved/mcpgo-http"},
	} {
		bare, ok := r.med(g.name, "bare-ns")
		if !ok {
			continue
		}
		aa := r.ratios(g.name, "bare2-ns", "bare-ns")
		own := r.ratios(g.name, "own-ns", "bare-ns", "bare2-ns")
		tm := r.ratios(g.name, "toolmw-ns", "bare-ns", "bare2-ns")
		tmOwn := r.ratios(g.name, "toolmw-ns", "own-ns")
		t.row(g.label, strconv.Itoa(len(tm)), dur(bare), interval(aa), interval(own), interval(tm), interval(tmOwn),
			bound(tm, 1.03), bound(tmOwn, 1-1e-9))
	}
	b.WriteString("\n")

	// Audit.
	b.WriteString("## The audit writer\n\n")
	fmt.Fprintf(&b, "`BenchmarkAudit`: audit.NewAsync in front of sqlstore (batch size %s; queue 8192; rows in time order, as they arrive). **throughput**: rows\n"+
		"emitted as fast as possible under the Block policy (no row lost), timed until Close has committed the last\n"+
		"one; rows/CPU-s divides by the process's CPU time instead, which does not depend on other load.\n"+
		"**enqueue**: the latency of one Emit while the writer writes to the database (Drop policy, paced so the\n"+
		"queue never fills); every sample includes one clock read, shown as the clock's own percentiles.\n"+
		"Issue 3's target: ≥ 100,000 rows/s into each store.\n\n", "2048, the default")
	t.head("store", "rows/s", "±", "rows/CPU-s", "≥ 100k rows/s", "Emit p50", "Emit p99", "clock p50 / p99", "dropped")
	for _, s := range []string{"sqlite", "postgres"} {
		tn := "BenchmarkAudit/" + s + "/throughput"
		en := "BenchmarkAudit/" + s + "/enqueue"
		rows, ok := r.med(tn, "rows/s")
		if !ok {
			t.row(s, "skipped (TOOLMW_TEST_POSTGRES_DSN unset)", "", "", "", "", "", "", "")
			continue
		}
		cpu, _ := r.med(tn, "rows/cpu-s")
		p50, _ := r.med(en, "p50-ns")
		p99, _ := r.med(en, "p99-ns")
		c50, _ := r.med(en, "clock-p50-ns")
		c99, _ := r.med(en, "clock-p99-ns")
		dr, _ := r.med(en, "dropped-%")
		t.row(s, num(rows), r.spread(tn, "rows/s"), num(cpu), verdict(rows >= 100000), dur(p50), dur(p99), dur(c50)+" / "+dur(c99), num(dr)+"%")
	}
	b.WriteString("\nA sink that never returns, rows arriving as fast as one goroutine can emit them (Drop policy), each\n" +
		"row holding a message of its own: the live heap grows by the queue's slots and the rows they hold, not\n" +
		"with the number of rows emitted.\n\n")
	t.head("queue size", "rows emitted", "heap growth", "RSS", "dropped", "Emit time")
	for _, q := range []string{"4096", "65536"} {
		n := "BenchmarkAudit/stalled/queue=" + q
		hg, ok := r.med(n, "heap-growth-MB")
		if !ok {
			continue
		}
		rss, _ := r.med(n, "rss-MB")
		dr, _ := r.med(n, "dropped-%")
		ns, _ := r.med(n, "ns/op")
		t.row(q, rowsEmitted(r, n), num(hg)+" MB", num(rss)+" MB", num(dr)+"%", dur(ns))
	}
	b.WriteString("\n")

	// Growth.
	b.WriteString("## How the cost grows\n\n### Chain length\n\n")
	t.head("interceptors", "pass-through", "allocs", "no-op After hooks", "allocs")
	for _, n := range []string{"1", "2", "4", "8", "16"} {
		p, _ := r.med("BenchmarkGrowth/length/passthrough/n="+n, "ns/op")
		pa, _ := r.med("BenchmarkGrowth/length/passthrough/n="+n, "allocs/op")
		a, _ := r.med("BenchmarkGrowth/length/after/n="+n, "ns/op")
		aa, _ := r.med("BenchmarkGrowth/length/after/n="+n, "allocs/op")
		t.row(n, dur(p), num(pa), dur(a), num(aa))
	}
	b.WriteString("\n### Argument and result size\n\nThe echo tool's argument and result are the same string; toolmw is the full chain.\n\n")
	t.head("size", "go-sdk in-memory bare", "toolmw", "ratio", "mcp-go in-process bare", "toolmw", "ratio")
	for _, s := range []string{"100B", "10KB", "100KB", "1MB"} {
		sb, _ := r.med("BenchmarkGrowth/size/sdk-in-memory/"+s+"/bare", "ns/op")
		st, _ := r.med("BenchmarkGrowth/size/sdk-in-memory/"+s+"/toolmw", "ns/op")
		gb, _ := r.med("BenchmarkGrowth/size/mcpgo-in-process/"+s+"/bare", "ns/op")
		gt, _ := r.med("BenchmarkGrowth/size/mcpgo-in-process/"+s+"/toolmw", "ns/op")
		t.row(s, dur(sb), dur(st), fmt.Sprintf("%.3f", st/sb), dur(gb), dur(gt), fmt.Sprintf("%.3f", gt/gb))
	}
	b.WriteString("\n### Concurrency\n\nThe full chain (audit into an async writer, Drop) around a trivial handler; time/call is wall time\n" +
		"divided by all calls of all goroutines, on the machine's cores.\n\n")
	t.head("goroutines", "time/call", "±", "allocs/call", "rows dropped")
	for _, c := range []string{"1", "2", "8", "16", "64"} {
		n := "BenchmarkGrowth/concurrency/goroutines=" + c
		ns, ok := r.med(n, "ns/op")
		if !ok {
			continue
		}
		al, _ := r.med(n, "allocs/op")
		dr, _ := r.med(n, "dropped-%")
		t.row(c, dur(ns), r.spread(n, "ns/op"), num(al), num(dr)+"%")
	}

	// Everything.
	b.WriteString("\n## Every figure (medians)\n\n")
	t.head("benchmark", "counts", "figures")
	for _, name := range r.order {
		var units []string
		for u := range r.vals[name] {
			units = append(units, u)
		}
		sort.Strings(units)
		var cells []string
		for _, u := range units {
			m, _ := r.med(name, u)
			cells = append(cells, num(m)+" "+u)
		}
		t.row("`"+strings.TrimPrefix(name, "Benchmark")+"`", strconv.Itoa(r.count(name)), strings.Join(cells, ", "))
	}
	if strings.TrimSpace(benchstat) != "" {
		b.WriteString("\n## benchstat\n\n```\n" + strings.TrimSpace(benchstat) + "\n```\n")
	}
	return b.String()
}

func rowsEmitted(r *results, name string) string {
	n, _ := r.med(name, "iterations")
	return num(n)
}
