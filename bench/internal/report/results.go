package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// results maps a benchmark name (without the -GOMAXPROCS suffix) to its
// samples per unit, in the order seen.
type results struct {
	order []string
	vals  map[string]map[string][]float64
	// paired are bench/internal/paired's per-burst figures, when given.
	paired *pairedRuns
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

// has reports whether name has samples of unit.
func (r *results) has(name, unit string) bool { return len(r.vals[name][unit]) > 0 }

// med returns the median of name's unit, and whether there was one.
func (r *results) med(name, unit string) (float64, bool) {
	v := r.vals[name][unit]
	if len(v) == 0 {
		return math.NaN(), false
	}
	return median(v), true
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
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
// from the same line (the same count of the same benchmark).
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

func (r *results) count(name string) int {
	n := 0
	for _, v := range r.vals[name] {
		n = max(n, len(v))
	}
	return n
}

// sub returns the names that are prefix followed by one more level (no
// further "/"), in the order seen, and that last level of each.
func (r *results) sub(prefix string) (names, last []string) {
	for _, n := range r.order {
		rest, ok := strings.CutPrefix(n, prefix)
		if ok && rest != "" && !strings.Contains(rest, "/") {
			names = append(names, n)
			last = append(last, rest)
		}
	}
	return names, last
}

// meta is what bench/run says about the run: "key: value" lines, and one
// "Group REGEX: ..." line per run group with its load average.
type meta struct {
	kv     [][2]string
	groups []group
}

// get returns the value of the meta line named k.
func (m meta) get(k string) (string, bool) {
	for _, kv := range m.kv {
		if kv[0] == k {
			return kv[1], true
		}
	}
	return "", false
}

// group is one `run` of bench/run: a -bench regex run for some counts,
// with the load average when it started and when it ended.
type group struct {
	regex, benchtime, counts string
	loadStart, loadEnd       string
	seconds                  string
	// bursts and generations: the paired group's -bursts and -generations.
	bursts, generations string
}

func readMeta(path string) (meta, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return meta{}, err
	}
	return parseMeta(string(b)), nil
}

// parseMeta reads bench/run's meta file. A group line is
//
//	Group ^BenchmarkChain$: benchtime=200ms counts=5 load=1.60 2.15 3.12 -> 1.66 2.00 2.94 seconds=23
//	Group paired: bursts=240 generations=16 load=0.99 1.57 2.55 -> 1.02 1.20 2.07 seconds=250
func parseMeta(s string) meta {
	var m meta
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if re, isGroup := strings.CutPrefix(k, "Group "); isGroup {
			g := group{regex: re}
			for _, field := range []struct {
				key string
				dst *string
			}{{"benchtime=", &g.benchtime}, {"counts=", &g.counts}, {"seconds=", &g.seconds},
				{"bursts=", &g.bursts}, {"generations=", &g.generations}} {
				if i := strings.Index(v, field.key); i >= 0 {
					*field.dst, _, _ = strings.Cut(v[i+len(field.key):], " ")
				}
			}
			if i := strings.Index(v, "load="); i >= 0 {
				load, _, _ := strings.Cut(v[i+len("load="):], " seconds=")
				g.loadStart, g.loadEnd, _ = strings.Cut(load, " -> ")
			}
			m.groups = append(m.groups, g)
			continue
		}
		m.kv = append(m.kv, [2]string{k, v})
	}
	return m
}

// groupsOf returns the run groups whose regex runs one of the top-level
// benchmarks named (without "Benchmark").
func (m meta) groupsOf(benchmarks ...string) []group {
	var out []group
	for _, g := range m.groups {
		for _, b := range benchmarks {
			if strings.Contains(g.regex, "Benchmark"+b+"$") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// groupOf returns the group whose regex is name (bench/run's "paired").
func (m meta) groupOf(name string) (group, bool) {
	for _, g := range m.groups {
		if g.regex == name {
			return g, true
		}
	}
	return group{}, false
}
