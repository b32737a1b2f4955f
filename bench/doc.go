// Package bench measures what toolmw costs, side by side with what a user
// would run instead: the bare MCP SDKs, and the SDKs with their own recovery
// and logging middleware.
//
// It holds benchmarks only (and this file). Run everything, with several
// counts per figure, and regenerate BENCHMARKS.md at the repository root with
//
//	bench/run
//
// or a single group by hand, for example
//
//	go test -run '^$' -bench 'Chain' -benchtime 100x ./bench
//
// The groups:
//
//   - BenchmarkChain: the core interceptors around a trivial handler
//     (success, public error, raw error, panic) next to a direct call and two
//     clock reads; the audit interceptor's enqueue cost.
//   - BenchmarkSDK, BenchmarkMCPGo: tools/call end to end, three ways in one
//     run — bare SDK, the SDK with its own recovery and logging, and toolmw's
//     full chain (audit into an async sink, Diagnostics, Normalize, Recover).
//   - BenchmarkAudit: the async writer into SQLite and PostgreSQL
//     (throughput, p99 enqueue latency) and memory under a stalled sink.
//     PostgreSQL figures need TOOLMW_TEST_POSTGRES_DSN.
//   - BenchmarkGrowth: chain length 1 to 16, argument and result size
//     100 B to 1 MB, concurrency 1 to 64.
//   - bench/internal/paired (in bench/run): the end-to-end verdicts, on
//     CPU per call, every arm (bare twice, the SDK's own middleware,
//     toolmw) in one long-lived worker process (BenchmarkPairedWorker),
//     alternated in steps of a few calls; ratios paired per round of
//     steps, the worker started again every few rounds.
//   - BenchmarkABCPU (not in bench/run): the A/B harness for a
//     change inside an adapter, CPU time per call of toolmw and two bare
//     servers, for alternating two builds on a shared machine.
//
// Everything runs on loopback; `go test ./bench` (no -bench) runs a quick
// smoke test and the call path's regression guard (guard_test.go):
// allocations per call of the chain and of each SDK's in-process
// tools/call against its budget, and toolmw's CPU per call against a bare
// server's in the same process, with a generous bound.
package bench
