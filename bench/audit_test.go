package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// Batch size of the writer in the store figures (the AsyncConfig default).
const storeBatch = 2048

var tableSeq atomic.Int64

// auditRows is a set of realistic rows: one in ten a scrubbed internal
// error carrying its raw message.
func auditRows(n int) []audit.Record {
	rows := make([]audit.Record, n)
	now := time.Now()
	for i := range rows {
		rows[i] = audit.Record{Time: now.Add(time.Duration(i)), Kind: audit.KindTool, CallID: "call-" + strconv.Itoa(i),
			SessionID: "session-1", Transport: "streamable-http", Tool: "search", Subject: "alice",
			Outcome: audit.OutcomeOK, Duration: 1234 * time.Microsecond}
		if i%10 == 0 {
			rows[i].Outcome, rows[i].Code, rows[i].Message = audit.OutcomeError, errs.CodeInternal, "dial tcp 10.0.0.1:5432: connection refused"
		}
	}
	return rows
}

type store struct {
	name string
	// open opens the store for one benchmark; for PostgreSQL it also
	// returns the meter of the server's CPU time for its connections.
	open func(b *testing.B) (*sqlstore.Store, *pgCPU)
}

// pgDSN is the test server's DSN, or skips b.
func pgDSN(b *testing.B) string {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	return dsn
}

// pgTable returns a table name of this process's own, dropped (with the
// store's side tables) when b ends.
func pgTable(b *testing.B, dsn, prefix string) string {
	table := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), tableSeq.Add(1))
	b.Cleanup(func() {
		ctx := context.Background()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
			_ = c.Close(ctx)
		}
	})
	return table
}

func stores() []store {
	return []store{
		{"sqlite", func(b *testing.B) (*sqlstore.Store, *pgCPU) {
			s, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "audit.db"), sqlstore.Config{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s, nil
		}},
		{"postgres", func(b *testing.B) (*sqlstore.Store, *pgCPU) {
			dsn := pgDSN(b)
			table := pgTable(b, dsn, "toolmw_bench")
			meter, appDSN := newPGCPU(b, dsn, table)
			s, err := sqlstore.OpenPostgres(context.Background(), appDSN, sqlstore.Config{Table: table})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s, meter
		}},
	}
}

// reportRows reports a store benchmark's rows/s over el, cpu-ns/row (this
// process, every goroutine), and for PostgreSQL server-cpu-ns/row (the
// backends serving its connections, see pgCPU); rows/cpu-s counts both.
// One op is one row: cpu-ns/op is cpu-ns/row, under the name every judged
// row reports.
func reportRows(b *testing.B, rows int, el, cpu, server time.Duration, pg bool) {
	b.ReportMetric(float64(rows)/el.Seconds(), "rows/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows), "cpu-ns/row")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows), "cpu-ns/op")
	if pg {
		b.ReportMetric(float64(server.Nanoseconds())/float64(rows), "server-cpu-ns/row")
	}
	b.ReportMetric(float64(rows)/(cpu+server).Seconds(), "rows/cpu-s")
}

// BenchmarkAudit measures the async writer into each store:
//
//   - throughput: b.N rows emitted as fast as possible under the Block
//     policy (no row lost), then Close; rows/s is b.N over the time until
//     the last row is committed (issue 3: at least 100,000 rows/s);
//     cpu-ns/row is this process's CPU per row, server-cpu-ns/row (for
//     PostgreSQL) the server backend's, and rows/cpu-s counts both.
//   - enqueue: Emit's latency while the writer is writing to the store
//     (Drop policy, paced so that the queue never fills): p50/p99 per Emit,
//     next to the same percentiles of an empty timed region (the clock's own
//     cost, which is in every per-call sample); cpu-ns/op is this
//     process's CPU per row, the writer's included.
//   - stalled: memory while the sink never returns and calls keep coming
//     (Drop): the heap and RSS stay bounded by the queue size (see
//     benchStalled: rows from real calls through go-sdk and mcpsdk).
func BenchmarkAudit(b *testing.B) {
	for _, st := range stores() {
		b.Run(st.name+"/throughput", func(b *testing.B) {
			s, server := st.open(b)
			rows := auditRows(4096)
			w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: storeBatch, Policy: audit.Block, BlockTimeout: time.Minute, FallbackLogger: discardLogger(), Fallback: discardSink})
			ctx := context.Background()
			b.ReportAllocs()
			if server != nil {
				server.begin(b)
			}
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			t0 := time.Now()
			for i := 0; i < b.N; i++ {
				r := rows[i&4095]
				r.Time = t0.Add(time.Duration(i)) // rows arrive in time order, as they do
				w.Emit(ctx, r)
			}
			if err := w.Close(ctx); err != nil {
				b.Fatal(err)
			}
			el, cpu := time.Since(start), cpuTime()-cpu0
			b.StopTimer()
			var srv time.Duration
			if server != nil {
				srv = server.since(b)
			}
			if got := w.Stats(); got.Written != uint64(b.N) {
				b.Fatalf("written %d of %d: %+v", got.Written, b.N, got)
			}
			reportRows(b, b.N, el, cpu, srv, server != nil)
		})
		b.Run(st.name+"/enqueue", func(b *testing.B) {
			s, _ := st.open(b)
			rows := auditRows(4096)
			const queue = 8192
			w := newAsync(b, s, audit.AsyncConfig{QueueSize: queue, BatchSize: storeBatch, Policy: audit.Drop})
			ctx := context.Background()
			lat := make([]time.Duration, 0, min(b.N, 1<<20))
			floor := make([]time.Duration, 0, min(b.N, 1<<20))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				if i%256 == 0 {
					// Pace: let the writer catch up so that Emit measures
					// the enqueue, not the drop path.
					for j := 0; w.Stats().Queued > queue/2 && j < 10000; j++ {
						time.Sleep(50 * time.Microsecond)
					}
				}
				t0 := time.Now()
				w.Emit(ctx, rows[i&4095])
				d := time.Since(t0)
				t1 := time.Now()
				f := time.Since(t1)
				if len(lat) < cap(lat) {
					lat, floor = append(lat, d), append(floor, f)
				} else {
					lat[i%len(lat)], floor[i%len(floor)] = d, f
				}
			}
			cpu.stop(closer(w))
			slices.Sort(lat)
			slices.Sort(floor)
			b.ReportMetric(float64(pct(lat, 50)), "p50-ns")
			b.ReportMetric(float64(pct(lat, 99)), "p99-ns")
			b.ReportMetric(float64(pct(floor, 50)), "clock-p50-ns")
			b.ReportMetric(float64(pct(floor, 99)), "clock-p99-ns")
			b.ReportMetric(100*float64(w.Stats().Dropped)/float64(b.N), "dropped-%")
		})
	}
	for _, q := range []int{4096, 65536} {
		b.Run(fmt.Sprintf("stalled/queue=%d", q), func(b *testing.B) { benchStalled(b, q) })
	}
}

// benchStalled is BenchmarkAudit's stalled case: b.N tools/call through
// mcp-go's in-process client and toolmw's mcpgo adapter with the full chain,
// whose audit rows go to an async writer (queue of q rows, Drop) in front of
// a sink that never returns. Each call carries its own 1 KB argument and a
// client _meta key, and its handler fails with a raw error naming part of
// its argument, so every row is built by the interceptor from a real call
// and holds what such a row holds (a raw message, the untrusted _meta):
// whatever a queued row keeps alive of its call is in the heap figure. It
// reports the live heap's growth (from before the server was built: one
// server and session are in it, well under 1 MB), the RSS, the heap growth
// per queue slot (heap-B/slot: once the queue is full, dropped-% above 0,
// what one queued row costs with everything it keeps alive), and dropped-%,
// the share of the calls whose row found the queue full. It takes about
// 2×q calls to fill the queue and show drops (one writer batch is held by
// the stalled sink, out of the queue).
func benchStalled(b *testing.B, q int) {
	release := make(chan struct{})
	stall := audit.SinkFunc(func(ctx context.Context, _ []audit.Record) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})
	heap0, _ := memNow()
	w := audit.NewAsync(stall, audit.AsyncConfig{QueueSize: q, Policy: audit.Drop, FallbackLogger: discardLogger(), Fallback: discardSink})
	defer func() {
		close(release)
		_ = w.Close(context.Background())
	}()
	s := server.NewMCPServer("bench", "0", mcpgo.ServerOption(fullChain(w).Middleware()))
	s.AddTool(gomcp.NewTool("search", gomcp.WithString("q")), func(_ context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
		q, _ := req.GetArguments()["q"].(string)
		return nil, fmt.Errorf("search %s: dial tcp 10.0.0.5:5432: connection refused", q[:min(len(q), 64)])
	})
	c := mcpgoInProcess(b, s)
	pad := strings.Repeat("x", 1<<10)
	var seq atomic.Int64
	call := func() error {
		i := strconv.FormatInt(seq.Add(1), 10)
		req := mcpgoRequest(map[string]any{"q": i + pad[len(i):]})
		req.Params.Name = "search"
		req.Params.Meta = &gomcp.Meta{AdditionalFields: map[string]any{"example.com/trace": "trace-" + i}}
		res, err := c.CallTool(context.Background(), req)
		if err == nil && !res.IsError {
			err = errors.New("the call succeeded: its handler fails")
		}
		return err
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := call(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	heap, rss := memNow()
	stats := w.Stats()
	b.ReportMetric(float64(heap-heap0)/(1<<20), "heap-growth-MB")
	b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
	b.ReportMetric(float64(heap-heap0)/float64(q), "heap-B/slot")
	b.ReportMetric(100*float64(stats.Dropped)/float64(b.N), "dropped-%")
}

// pct returns the p-th percentile of sorted d.
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[(len(d)-1)*p/100]
}

// memNow returns the live heap after a GC and the resident set size.
func memNow() (heap, rss uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if data, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 1 {
			pages, _ := strconv.ParseUint(f[1], 10, 64)
			rss = pages * uint64(os.Getpagesize())
		}
	}
	return ms.HeapAlloc, rss
}
