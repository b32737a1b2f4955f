package main

import "strings"

// arm is what one server of an end-to-end comparison runs, for the table
// that says so next to the figures: unequal work must be visible.
type arm struct {
	name       string // the metric's prefix in BenchmarkInterleaved (bare-ns) or the sub-benchmark's name
	middleware string
	logging    string // sync or async, and where the line is formatted
	lines      string // log lines per successful tools/call
}

// arms are the servers the bench package runs, in the order the tables
// show them. Names are BenchmarkInterleaved's metric prefixes; the
// separate benchmarks' sub-benchmark names are mapped to them by armOf.
var arms = []arm{
	{"bare", "none: the SDK alone", "none", "0"},
	{"bare2", "none: a second, identical bare server (the A/A control)", "none", "0"},
	{"own", "go-sdk: a receiving middleware with a deferred recover and one slog line per method (after the SDK's examples/server/middleware); " +
		"mcp-go: `server.WithRecovery()` + `server.WithLogger`",
		"sync, formatted on the call's goroutine (text handler into io.Discard)",
		"go-sdk 1; mcp-go 2 (`mcp.request` and `mcp.tool`)"},
	{"toolmw", "toolmw's full chain: audit.Interceptor into an async writer (Drop), Diagnostics, Normalize, Recover",
		"async: the audit row is formatted by a slog text sink on the writer's goroutine; Diagnostics logs only failures",
		"1 audit row"},
	{"toolmw-syncslog", "toolmw's full chain with each audit row written on the call: audit.Direct into a SlogSink (no async writer)",
		"sync, formatted on the call's goroutine, like the own-middleware arm",
		"1 audit row"},
	{"demo", "the demo server's stack as examples/server runs it with its default flags (packages examples/server/stack and serve: " +
		"its tools and chain, the in-flight tracker, its HTTP middleware, the http.Server's timeouts; no OpenTelemetry, off by default), " +
		"against bare go-sdk servers with the same greet tool",
		"async: audit rows through audit.NewAsync into SQLite with a local spool; diagnostics to slog (text into io.Discard) on failures",
		"1 audit row (SQLite)"},
}

// armOf maps a separate end-to-end benchmark's sub-benchmark name to its
// arm name (sdk-mw and mcpgo-mw are the "own" arm).
func armOf(sub string) string {
	switch sub {
	case "sdk-mw", "mcpgo-mw":
		return "own"
	}
	return sub
}

// describe returns the arm named name, or one that says it is not
// described (a new arm the report does not know yet shows up as such,
// rather than as nothing).
func describe(name string) arm {
	for _, a := range arms {
		if a.name == name {
			return a
		}
	}
	return arm{name: name, middleware: "**not described by bench/internal/report: add it to arms**", logging: "?", lines: "?"}
}

// armOrder sorts arm names: the known ones in arms' order, then the rest
// as found.
func armOrder(names []string) []string {
	var out []string
	for _, a := range arms {
		for _, n := range names {
			if n == a.name {
				out = append(out, n)
			}
		}
	}
	for _, n := range names {
		known := false
		for _, a := range arms {
			known = known || a.name == n
		}
		if !known {
			out = append(out, n)
		}
	}
	return out
}

// isToolmw reports whether an arm runs toolmw's chain, so that the end-to-end
// targets apply to it.
func isToolmw(name string) bool { return name == "toolmw" || strings.HasPrefix(name, "toolmw-") }
