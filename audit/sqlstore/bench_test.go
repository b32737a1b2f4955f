package sqlstore_test

import (
	"context"
	"errors"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
)

func benchRows(n int) []audit.Record {
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

// benchThroughput pushes b.N rows through an Async writer (Block policy,
// waiting up to a minute, so that every row is written;
// batches of batchSize) into the store and reports rows/s.
func benchThroughput(b *testing.B, bk backend, batchSize int) {
	s, _ := bk.open(b)
	rows := benchRows(4096)
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 4 * batchSize, BatchSize: batchSize, FlushInterval: 50 * time.Millisecond,
		Policy: audit.Block, BlockTimeout: time.Minute, FallbackLogger: quiet()})
	ctx := context.Background()
	b.ReportAllocs()
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
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	st := w.Stats()
	if st.Written != uint64(b.N) {
		b.Fatalf("written %d of %d: %+v", st.Written, b.N, st)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "rows/s")
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "rows/cpu-s")
}

// cpuTime is the process's user+system CPU time: on a machine shared with
// other work, rows per CPU-second is the figure that does not depend on
// what else runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkThroughputSQLite(b *testing.B)   { benchThroughput(b, sqliteBackend(), 1024) }
func BenchmarkThroughputPostgres(b *testing.B) { benchThroughput(b, pgBackend(), 4096) }

// BenchmarkWriteBatchSQLite is one 500-row transaction, without the writer.
func BenchmarkWriteBatchSQLite(b *testing.B) {
	s, _ := sqliteBackend().open(b)
	rows := benchRows(500)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.WriteBatch(ctx, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkSQLiteChunk(b *testing.B) {
	for _, c := range []int{1, 2, 4, 8, 16} {
		b.Run(strconv.Itoa(c), func(b *testing.B) {
			defer sqlstore.SetSQLiteChunk(sqlstore.SetSQLiteChunk(c))
			s, _ := sqliteBackend().open(b)
			rows := benchRows(1024)
			ctx := context.Background()
			cpu0 := cpuTime()
			t0 := time.Now()
			for b.Loop() {
				for i := range rows {
					rows[i].Time = t0
					t0 = t0.Add(time.Microsecond)
				}
				if err := s.WriteBatch(ctx, rows); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.N*len(rows))/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
		})
	}
}

// BenchmarkSpoolDrainPostgres fills a spool with b.N rows (in batches of
// 2,048, the default) while the store is unreachable, then replays it into
// PostgreSQL from disk, as a restarted process does: rows/s is the drain
// rate, through the ledger (WriteBatchOnce).
func BenchmarkSpoolDrainPostgres(b *testing.B) {
	s, _ := pgBackend().open(b)
	dir := b.TempDir()
	sp, err := audit.OpenSpool(dir, audit.SpoolConfig{MaxBytes: 4 << 30, FallbackLogger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	down := audit.SinkFunc(func(context.Context, []audit.Record) error { return errors.New("down") })
	w := audit.NewAsync(down, audit.AsyncConfig{Policy: audit.Block, BlockTimeout: time.Minute, Backoff: time.Hour, Spool: sp, FallbackLogger: quiet()})
	rows := benchRows(4096)
	for i := 0; i < b.N; i++ {
		w.Emit(context.Background(), rows[i&4095])
	}
	_ = w.Close(context.Background())
	if st := w.Stats(); st.Spooled != uint64(b.N) {
		b.Fatalf("spooled %d of %d", st.Spooled, b.N)
	}
	b.ResetTimer()
	start := time.Now()
	sp2, err := audit.OpenSpool(dir, audit.SpoolConfig{MaxBytes: 4 << 30, FallbackLogger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	w2 := audit.NewAsync(s, audit.AsyncConfig{Spool: sp2, FallbackLogger: quiet()})
	if err := w2.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	if st := w2.Stats(); st.Replayed != uint64(b.N) {
		b.Fatalf("replayed %d of %d", st.Replayed, b.N)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "rows/s")
}
