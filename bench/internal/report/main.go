package main

import (
	"flag"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	in := flag.String("in", "", "raw go test -bench output")
	metaPath := flag.String("meta", "", "file of 'key: value' lines describing the run, and its 'Group' lines")
	extra := flag.String("benchstat", "", "optional benchstat output to append")
	out := flag.String("out", "BENCHMARKS.md", "where to write the report")
	chartDir := flag.String("charts", "", "directory to write the SVG charts into (none when empty)")
	pairedPath := flag.String("paired", "", "optional output of bench/internal/paired (per-burst CPU per call)")
	details := flag.String("details", "", "where to write the details page (every figure, the interleaved table, benchstat); none when empty")
	chartFormat := flag.String("chart-format", "svg", "svg, or png to preview the charts where no SVG viewer is at hand")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	res := parse(f)
	f.Close()
	if *pairedPath != "" {
		pf, err := os.Open(*pairedPath)
		if err != nil {
			log.Fatal(err)
		}
		res.paired, err = parsePaired(pf)
		pf.Close()
		if err != nil {
			log.Fatal(err)
		}
	}
	var m meta
	if *metaPath != "" {
		if m, err = readMeta(*metaPath); err != nil {
			log.Fatal(err)
		}
	}
	var bs string
	if *extra != "" {
		if b, err := os.ReadFile(*extra); err == nil {
			bs = string(b)
		}
	}
	links := map[string]string{}
	if *chartDir != "" {
		files, err := drawCharts(res, *chartDir, *chartFormat)
		if err != nil {
			log.Fatal(err)
		}
		for name, file := range files {
			rel, err := filepath.Rel(filepath.Dir(*out), file)
			if err != nil {
				log.Fatal(err)
			}
			links[name] = filepath.ToSlash(rel)
		}
	}
	report := render(res, m, links)
	if *details != "" {
		dlinks := map[string]string{}
		for name, file := range links {
			dlinks[name] = filepath.ToSlash(filepath.Base(file))
		}
		if err := os.WriteFile(*details, []byte(renderDetails(res, m, dlinks, bs)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
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
