package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
	case math.Abs(ns) >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case math.Abs(ns) >= 1e4:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case math.Abs(ns) >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.1f ns", ns)
	}
}

// plus formats a difference of nanoseconds with its sign.
func plus(ns float64) string {
	if !math.IsNaN(ns) && ns >= 0 {
		return "+" + dur(ns)
	}
	return dur(ns)
}

// ratio formats a ratio of two figures, "—" when either is missing.
func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", a/b)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return num(v) + "%"
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
