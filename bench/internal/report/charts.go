package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// drawCharts writes the report's charts into dir (format: "svg", or "png"
// for a preview), from the same figures as the tables, and returns the
// files written by chart name. A chart whose figures are not in the
// results is not drawn.
func drawCharts(r *results, dir, format string) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, c := range []struct {
		name string
		draw func(*results) (*plot.Plot, vg.Length, error)
	}{
		{"length", lengthChart},
		{"size", sizeChart},
		{"concurrency", concurrencyChart},
		{"ceiling", ceilingChart},
		{"interleaved", interleavedChart},
	} {
		p, h, err := c.draw(r)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.name, err)
		}
		if p == nil {
			continue
		}
		file := filepath.Join(dir, c.name+"."+format)
		if err := p.Save(16*vg.Centimeter, h, file); err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.name, err)
		}
		files[c.name] = file
	}
	return files, nil
}

// series is one line of a chart: its points, and whether it is a CPU-time
// line (dashed, next to the wall-time line of the same color).
type series struct {
	label string
	xys   plotter.XYs
	cpu   bool
	color int
}

// points collects (x, median of unit) for the names that have the unit.
func points(r *results, xs []float64, names []string, unit string) plotter.XYs {
	var out plotter.XYs
	for i, n := range names {
		if v, ok := r.med(n, unit); ok && v > 0 {
			out = append(out, plotter.XY{X: xs[i], Y: v})
		}
	}
	return out
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// addLines adds the series that have points; it reports whether any had.
func addLines(p *plot.Plot, ss []series) (bool, error) {
	drawn := false
	for _, s := range ss {
		if len(s.xys) == 0 {
			continue
		}
		drawn = true
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return false, err
		}
		l.Color, pts.Color = plotutil.Color(s.color), plotutil.Color(s.color)
		if s.cpu {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			pts.Shape = draw.CrossGlyph{}
		}
		p.Add(l, pts)
		p.Legend.Add(s.label, l, pts)
	}
	return drawn, nil
}

// powersOf2 are log-axis ticks labelled 1, 2, 4, ….
func powersOf2(max float64) plot.ConstantTicks {
	var t plot.ConstantTicks
	for v := 1.0; v <= max; v *= 2 {
		t = append(t, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return t
}

func lengthChart(r *results) (*plot.Plot, vg.Length, error) {
	ns := []float64{1, 2, 4, 8, 16}
	names := func(kind string) []string {
		var out []string
		for _, n := range ns {
			out = append(out, fmt.Sprintf("BenchmarkGrowth/length/%s/n=%d", kind, int(n)))
		}
		return out
	}
	p := newPlot("Cost per call against chain length", "interceptors in the chain", "ns per call")
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = powersOf2(16), plot.LogTicks{Prec: -1}
	ok, err := addLines(p, []series{
		{"pass-through, wall", points(r, ns, names("passthrough"), "ns/op"), false, 0},
		{"pass-through, CPU", points(r, ns, names("passthrough"), cpuUnit), true, 0},
		{"no-op After, wall", points(r, ns, names("after"), "ns/op"), false, 1},
		{"no-op After, CPU", points(r, ns, names("after"), cpuUnit), true, 1},
	})
	if !ok || err != nil {
		return nil, 0, err
	}
	return p, 10 * vg.Centimeter, nil
}

var sizeBytes = []struct {
	name string
	n    float64
}{{"100B", 100}, {"10KB", 10 << 10}, {"100KB", 100 << 10}, {"1MB", 1 << 20}}

// sizeCase is one paired argument-size case: its name in the paired
// figures ("<case>@<size>"), its SDK's label, and its size.
type sizeCase struct {
	name, sdk, label, size string
	bytes                  float64
}

// sizeCases are the paired run's argument-size cases, go-sdk's first,
// each SDK's by size.
func sizeCases(pr *pairedRuns) []sizeCase {
	if pr == nil {
		return nil
	}
	var out []sizeCase
	for _, sdk := range []string{"sdk-in-memory", "mcpgo-in-process"} {
		for _, s := range sizeBytes {
			n := sdk + "@" + s.name
			if len(pr.cpu[n]["bare"]) > 0 {
				out = append(out, sizeCase{n, sdk, interleavedLabels[sdk], s.name, s.n})
			}
		}
	}
	return out
}

// sizeRatios is toolmw over bare per size for one SDK, paired, with its
// 95% interval over the rounds.
func sizeRatios(r *results, sdk string) (plotter.XYs, plotter.YErrors) {
	var xys plotter.XYs
	var errs plotter.YErrors
	for _, sc := range sizeCases(r.paired) {
		if sc.sdk != sdk {
			continue
		}
		q := judgePaired(sc.name, r.paired.cpu[sc.name], r.paired.other[sc.name]).toolmw
		if q.n == 0 {
			continue
		}
		xys = append(xys, plotter.XY{X: sc.bytes, Y: q.mean})
		lo, hi := q.mean-q.lo, q.hi-q.mean
		if math.IsNaN(lo) {
			lo, hi = 0, 0
		}
		errs = append(errs, struct{ Low, High float64 }{lo, hi})
	}
	return xys, errs
}

type xyYErrs struct {
	plotter.XYs
	plotter.YErrors
}

type xyXErrs struct {
	plotter.XYs
	plotter.XErrors
}

func sizeChart(r *results) (*plot.Plot, vg.Length, error) {
	p := newPlot("toolmw's full chain over bare against argument size", "argument and result size (bytes)", "toolmw / bare, CPU per call (paired, 95% interval)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks{{Value: 100, Label: "100 B"}, {Value: 10 << 10, Label: "10 KB"}, {Value: 100 << 10, Label: "100 KB"}, {Value: 1 << 20, Label: "1 MB"}}
	drawn := false
	for i, c := range []struct{ sdk, label string }{{"sdk-in-memory", "go-sdk in-memory"}, {"mcpgo-in-process", "mcp-go in-process"}} {
		xys, errs := sizeRatios(r, c.sdk)
		if len(xys) == 0 {
			continue
		}
		if _, err := addLines(p, []series{{c.label, xys, false, i}}); err != nil {
			return nil, 0, err
		}
		eb, err := plotter.NewYErrorBars(xyYErrs{xys, errs})
		if err != nil {
			return nil, 0, err
		}
		eb.Color = plotutil.Color(i)
		p.Add(eb)
		drawn = true
	}
	if !drawn {
		return nil, 0, nil
	}
	if err := hline(p, 1, sizeBytes[0].n, sizeBytes[len(sizeBytes)-1].n); err != nil {
		return nil, 0, err
	}
	return p, 10 * vg.Centimeter, nil
}

// hline draws y = v from x0 to x1, thin and gray.
func hline(p *plot.Plot, v, x0, x1 float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: v}, {X: x1, Y: v}})
	if err != nil {
		return err
	}
	l.Color = plotutil.Color(6)
	l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(l)
	return nil
}

// vline draws x = v from y0 to y1, labelled in the legend.
func vline(p *plot.Plot, v, y0, y1 float64, label string, color int) error {
	l, err := plotter.NewLine(plotter.XYs{{X: v, Y: y0}, {X: v, Y: y1}})
	if err != nil {
		return err
	}
	l.Color = plotutil.Color(color)
	l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

func concurrencyChart(r *results) (*plot.Plot, vg.Length, error) {
	names, subs := r.sub("BenchmarkGrowth/concurrency/")
	var xs []float64
	for _, s := range subs {
		g, err := strconv.Atoi(strings.TrimPrefix(s, "goroutines="))
		if err != nil {
			return nil, 0, fmt.Errorf("concurrency case %q: %w", s, err)
		}
		xs = append(xs, float64(g))
	}
	p := newPlot("Full chain against goroutines (labels: rows dropped)", "goroutines", "ns per call (all goroutines' calls)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = powersOf2(slicesMax(xs))
	wall := points(r, xs, names, "ns/op")
	ok, err := addLines(p, []series{
		{"wall", wall, false, 0},
		{"CPU", points(r, xs, names, cpuUnit), true, 1},
	})
	if !ok || err != nil {
		return nil, 0, err
	}
	var lab plotter.XYLabels
	for i, n := range names {
		w, okW := r.med(n, "ns/op")
		d, okD := r.med(n, "dropped-%")
		if okW && okD {
			lab.XYs = append(lab.XYs, plotter.XY{X: xs[i], Y: w})
			lab.Labels = append(lab.Labels, fmt.Sprintf("%.0f%%", d))
		}
	}
	if len(lab.XYs) > 0 {
		l, err := plotter.NewLabels(lab)
		if err != nil {
			return nil, 0, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XCenter, 0.3
		}
		p.Add(l)
	}
	p.Y.Min = 0
	p.Y.Tick.Marker = plainTicks{}
	return p, 10 * vg.Centimeter, nil
}

func slicesMax(v []float64) float64 {
	m := 1.0
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func ceilingChart(r *results) (*plot.Plot, vg.Length, error) {
	var driver, writer plotter.Values
	var labels []string
	var ratios plotter.XYLabels
	for _, s := range stores {
		f, ok := ceilingOf(r, s)
		if !ok {
			continue
		}
		driver, writer = append(driver, f.driverRows), append(writer, f.toolmwRows)
		labels = append(labels, s)
		ratios.XYs = append(ratios.XYs, plotter.XY{X: float64(len(labels) - 1), Y: f.toolmwRows})
		ratios.Labels = append(ratios.Labels, f.ratio.String())
	}
	if len(labels) == 0 {
		return nil, 0, nil
	}
	p := newPlot("Audit writer against its driver's ceiling (labels: toolmw / driver)", "", "rows/s")
	w := vg.Points(28)
	bd, err := plotter.NewBarChart(driver, w)
	if err != nil {
		return nil, 0, err
	}
	bd.Color, bd.Offset = plotutil.Color(0), -w/2
	bt, err := plotter.NewBarChart(writer, w)
	if err != nil {
		return nil, 0, err
	}
	bt.Color, bt.Offset = plotutil.Color(1), w/2
	p.Add(bd, bt)
	p.Legend.Add("driver alone", bd)
	p.Legend.Add("toolmw's writer", bt)
	p.Legend.Left = false
	l, err := plotter.NewLabels(ratios)
	if err != nil {
		return nil, 0, err
	}
	// Above the writer's bar.
	l.Offset = vg.Point{X: w / 2, Y: vg.Points(3)}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = draw.XCenter
	}
	p.Add(l)
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.7, float64(len(labels))-0.3
	// Room above the bars for the legend.
	top := 0.0
	for i := range driver {
		top = math.Max(top, math.Max(driver[i], writer[i]))
	}
	p.Y.Min, p.Y.Max = 0, 1.3*top
	p.Y.Tick.Marker = plainTicks{}
	return p, 9 * vg.Centimeter, nil
}

func interleavedChart(r *results) (*plot.Plot, vg.Length, error) {
	names, _ := r.sub("BenchmarkInterleaved/")
	var xys plotter.XYs
	var errs plotter.XErrors
	var labels []string
	for _, n := range names {
		c := judgeInterleaved(r, n)
		add := func(label string, q ci) {
			if q.n == 0 || math.IsNaN(q.mean) {
				return
			}
			lo, hi := q.mean-q.lo, q.hi-q.mean
			if math.IsNaN(lo) {
				lo, hi = 0, 0
			}
			xys = append(xys, plotter.XY{X: q.mean})
			errs = append(errs, struct{ Low, High float64 }{lo, hi})
			labels = append(labels, label)
		}
		add(c.label+": A/A", c.aa)
		for _, row := range c.rows {
			if row.arm != "bare" {
				add(c.label+": "+row.arm, row.vsBare)
			}
		}
	}
	if len(xys) == 0 {
		return nil, 0, nil
	}
	// Top to bottom in the tables' order.
	for i := range xys {
		xys[i].Y = float64(len(xys) - 1 - i)
	}
	rev := make([]string, len(labels))
	for i, l := range labels {
		rev[len(labels)-1-i] = l
	}
	p := newPlot("End to end, interleaved: each arm over bare", "ratio to bare (mean, 95% interval over counts)", "")
	p.Legend.Top, p.Legend.Left = true, false
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, 0, err
	}
	sc.Color = plotutil.Color(0)
	eb, err := plotter.NewXErrorBars(xyXErrs{xys, errs})
	if err != nil {
		return nil, 0, err
	}
	p.Add(sc, eb)
	top := float64(len(xys)) - 0.5
	if err := vline(p, 1, -0.5, top, "1 (bare)", 6); err != nil {
		return nil, 0, err
	}
	if err := vline(p, bareLimit, -0.5, top, "1.03 (the target)", 1); err != nil {
		return nil, 0, err
	}
	p.NominalY(rev...)
	h := vg.Length(len(xys))*0.55*vg.Centimeter + 3*vg.Centimeter
	return p, h, nil
}

// plainTicks are the default ticks, labelled as the tables write numbers
// (500,000 rather than 500000.00).
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = num(ts[i].Value)
		}
	}
	return ts
}
