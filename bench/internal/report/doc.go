// Command report turns the raw output of bench/run (go test -bench lines,
// several counts per benchmark) into BENCHMARKS.md: the median of each
// figure, the spread of the counts, CPU per call next to wall time, ratios
// with 95% intervals, each target judged on the row that does its work
// (gated by the A/A control where there is one), and SVG charts drawn from
// the same figures.
//
//	go run ./bench/internal/report -in raw.txt -meta meta.txt -charts bench/results -out BENCHMARKS.md
package main
