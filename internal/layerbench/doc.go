// Package layerbench runs the rounds of the adapters' layer benchmarks
// (toolctx/mcpsdk's and toolctx/mcpgo's BenchmarkLayersCPU, which
// BENCHMARKS.md's floor sections read), and holds the recover-and-log
// middleware a go-sdk user writes today, which those benchmarks and
// bench/run's own-middleware arm measure toolmw against. Tests and
// benchmarks only.
package layerbench
