// Command paired measures toolmw's end-to-end cost against the bare SDKs
// on CPU time, so that the verdicts can decide on a shared machine.
//
// For each case (an SDK and a transport) it starts a long-lived worker
// process of the bench test binary (BenchmarkPairedWorker) that serves
// four arms, each its own server and client: bare, a second bare (bare2,
// the A/A control), the SDK's own recover-and-log middleware (own) and
// toolmw's full chain. The worker sets them up once, in an order drawn
// anew for each process, and then runs rounds when told to over a pipe, so
// that no round pays for a process start or a cold heap. A round runs
// every arm a number of times (steps) for 8 calls each, in a new random
// order each step, and then collects the heap; an arm's figure is the
// process's CPU time (every thread: client, server, the audit writer) over
// its steps of the round, per call. toolmw's audit writer takes the
// round's rows as one batch and the arm waits for it to be written: toolmw
// pays for its rows, no other arm does.
//
// What makes the A/A control narrow enough to decide a 3% margin on two
// busy cores (BENCHMARKS.md's method gives the figures):
//
//   - GOMAXPROCS=1 in the worker. With a second P, every hand-off between
//     a client's and a server's goroutines wakes an idle thread that spins
//     looking for work: 30-40% of a bare call's CPU time on go-sdk in
//     memory (224 against 137 µs), and the noisiest part of it, since how
//     long a thread spins depends on what the other core does. With one P
//     the figure is the work the calls do.
//   - Short steps (8 calls an arm), so that whatever the machine does
//     changes in the middle of few steps and falls on every arm alike; not
//     shorter, since a step of one call charges the arms that run more code
//     of their own than the bare SDK for bringing it back after the other
//     arms' calls (go-sdk in memory: toolmw / bare 1.049 with steps of 1,
//     1.006 with 8, steady from 8 on; BENCHMARKS.md's method).
//   - A robust figure per round: the 20% trimmed mean of an arm's steps,
//     times its steps, with the step that waited for toolmw's batch of
//     rows added whole (see pairedServe). A preemption or an interrupt
//     falls on one step of one arm; summed, the few per round move that
//     arm's figure by a few %; trimmed, they are gone. The untrimmed sum is
//     written too (sum-ns/op), and the report shows toolmw / bare on it, a
//     check that the trimming took no cost of toolmw's away.
//
// Two identical bare processes differ by a few % for their whole life (a
// heap laid out otherwise, threads placed otherwise): with an arm per
// process (-mode separate, kept to show it) that difference does not
// shrink with more bursts, and the A/A interval stayed 8-14% wide. In one
// process the arms share all that. The worker is started again
// -generations times, so that one arm's luck in where its objects landed
// averages out too.
//
// Every round starts from a collected heap, and the worker runs with
// GOGC=off and GOMEMLIMIT=512MiB by default (above what one round
// allocates), so no collection falls inside a round: the collection after
// each round is timed apart (gc-ns/op, shared out by the bytes each arm
// allocated, which a collector's cost follows under any pacing). The first
// rounds of each generation warm the arms up and are not written.
//
// Ratios are taken within a round; bench/internal/report turns them into
// trimmed means with their intervals. It writes one line per arm per
// round (burst):
//
//	Paired/<case> burst=<n> arm=<arm> cpu-ns/op=<ns> sum-ns/op=<ns> gc-ns/op=<ns> wall-ns/op=<ns> B/op=<bytes> gen=<generation>
//
// which bench/internal/report reads with -paired (cpu-ns/op is the robust
// figure, sum-ns/op the untrimmed one).
//
//	go test -c -o /tmp/bench.test ./bench
//	go run ./bench/internal/paired -bin /tmp/bench.test -bursts 300 -generations 30 -out bench/results/paired.txt
package main
