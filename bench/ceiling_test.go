package bench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, as audit/sqlstore uses it

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
)

// storeColumns are the columns audit/sqlstore writes, in its order: all 24
// of schema 4, so that the driver arms send what the store sends (with 21,
// the server filled in the sizes' defaults and the client encoded three
// values a row fewer).
var storeColumns = []string{"ts", "kind", "call_id", "request_id", "session_id", "transport", "tool", "subject",
	"outcome", "code", "message", "detail", "duration_ns", "client_meta", "arguments", "method", "path", "status",
	"notes", "trace_id", "span_id", "request_bytes", "response_bytes", "content_blocks"}

// sqliteDSN is the DSN audit/sqlstore opens a database file with (WAL,
// synchronous=NORMAL, immediate transactions, checkpoint every 8,000
// pages): the driver alone must run under the same settings.
func sqliteDSN(path string) string {
	return "file:" + path + "?_busy_timeout=10000&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_pragma=wal_autocheckpoint(8000)"
}

// BenchmarkCeiling puts toolmw's audit writer next to the fastest the
// database driver alone writes the same rows, in the same run, so that the
// writer is judged as a share of what the store can take (issue 16: at
// least 0.9 of each ceiling). Both arms write b.N rows of auditRows' shape
// (one in ten an internal error with its message; timestamps in order) in
// batches of storeBatch, into a table that audit/sqlstore itself created,
// so with its columns and indexes:
//
//   - sqlite/driver: modernc.org/sqlite on one connection, with the store's
//     pragmas; per batch one transaction, one prepared one-row INSERT
//     executed per row on the driver connection with prebuilt arguments
//     (only the timestamp is set per row).
//   - postgres/driver: pgx CopyFrom on one connection, per batch, of
//     prebuilt rows (only the timestamp set per row).
//   - sqlite/toolmw, postgres/toolmw: audit.NewAsync into the
//     sqlstore.Store (Block policy, so that no row is dropped), b.N Emits
//     then Close.
//
// Each reports rows/s (b.N over the time until the last row is committed),
// cpu-ns/row (this process, every goroutine), for PostgreSQL
// server-cpu-ns/row (the backends serving the benchmark's connections:
// see pgCPU) and server-minflt/row (their minor page faults), and
// rows/cpu-s, which counts both CPU times. BenchmarkCeilingServer compares
// the two arms' server CPU batch by batch. The PostgreSQL cases need
// TOOLMW_TEST_POSTGRES_DSN.
func BenchmarkCeiling(b *testing.B) {
	b.Run("sqlite/driver", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "audit.db")
		s, err := sqlstore.OpenSQLite(context.Background(), path, sqlstore.Config{})
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Close() // it made the table and its indexes
		db, err := sql.Open("sqlite", sqliteDSN(path))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = db.Close() })
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = conn.Close() })
		args := sqliteArgs(auditRows(4096))
		insert := "INSERT INTO " + sqlstore.DefaultTable + " (" + strings.Join(storeColumns, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(storeColumns)-1) + ")"
		b.ReportAllocs()
		b.ResetTimer()
		start, cpu0 := time.Now(), cpuTime()
		t0 := time.Now().UnixNano()
		err = conn.Raw(func(dc any) error {
			bt, pc := dc.(driver.ConnBeginTx), dc.(driver.ConnPrepareContext)
			for done := 0; done < b.N; {
				n := min(storeBatch, b.N-done)
				tx, err := bt.BeginTx(ctx, driver.TxOptions{})
				if err != nil {
					return err
				}
				st, err := pc.PrepareContext(ctx, insert)
				if err != nil {
					return err
				}
				ex := st.(driver.StmtExecContext)
				for i := done; i < done+n; i++ {
					a := args[i&4095]
					a[0].Value = t0 + int64(i)
					if _, err := ex.ExecContext(ctx, a); err != nil {
						return err
					}
				}
				if err := st.Close(); err != nil {
					return err
				}
				if err := tx.Commit(); err != nil {
					return err
				}
				done += n
			}
			return nil
		})
		el, cpu := time.Since(start), cpuTime()-cpu0
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		checkCount(b, db.QueryRowContext(ctx, "SELECT count(*) FROM "+sqlstore.DefaultTable+" WHERE kind <> 'probe'").Scan)
		reportRows(b, b.N, el, cpu, 0, false)
	})
	b.Run("sqlite/toolmw", func(b *testing.B) { ceilingToolmw(b, stores()[0]) })
	b.Run("postgres/driver", func(b *testing.B) {
		dsn := pgDSN(b)
		table := pgTable(b, dsn, "toolmw_ceiling")
		meter, appDSN := newPGCPU(b, dsn, table)
		ctx := context.Background()
		s, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: table})
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Close() // it made the table and its indexes
		conn, err := pgx.Connect(ctx, appDSN)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = conn.Close(context.Background()) })
		src := &prebuilt{rows: pgValues(auditRows(4096)), t0: time.Now()}
		meter.begin(b)
		b.ReportAllocs()
		b.ResetTimer()
		start, cpu0 := time.Now(), cpuTime()
		for done := 0; done < b.N; {
			n := min(storeBatch, b.N-done)
			src.next, src.end = done, done+n
			copied, err := conn.CopyFrom(ctx, pgx.Identifier{table}, storeColumns, src)
			if err != nil {
				b.Fatal(err)
			}
			if int(copied) != n {
				b.Fatalf("copied %d rows of %d", copied, n)
			}
			done += n
		}
		el, cpu := time.Since(start), cpuTime()-cpu0
		b.StopTimer()
		server := meter.use(b)
		checkCount(b, conn.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE kind <> 'probe'").Scan)
		reportRows(b, b.N, el, cpu, server.cpu, true)
		reportFaults(b, server)
	})
	b.Run("postgres/toolmw", func(b *testing.B) { ceilingToolmw(b, stores()[1]) })
}

// ceilingToolmw is the toolmw arm: the async writer into st.
func ceilingToolmw(b *testing.B, st store) {
	s, server := st.open(b)
	rows := auditRows(4096)
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: storeBatch, Policy: audit.Block, BlockTimeout: time.Minute, FallbackLogger: discardLogger(), Fallback: discardSink})
	ctx := context.Background()
	if server != nil {
		server.begin(b)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		r := rows[i&4095]
		r.Time = t0.Add(time.Duration(i))
		w.Emit(ctx, r)
	}
	if err := w.Close(ctx); err != nil {
		b.Fatal(err)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	var srv procUse
	if server != nil {
		srv = server.use(b)
	}
	if got := w.Stats(); got.Written != uint64(b.N) {
		b.Fatalf("written %d of %d: %+v", got.Written, b.N, got)
	}
	reportRows(b, b.N, el, cpu, srv.cpu, server != nil)
	if server != nil {
		reportFaults(b, srv)
	}
}

// reportFaults reports the PostgreSQL backends' minor page faults per row
// (server-minflt/row): memory a backend gives back at the end of each COPY
// and faults in again at the next costs it CPU that the data does not
// explain (see sqlstore's keepCopyMemory).
func reportFaults(b *testing.B, server procUse) {
	b.ReportMetric(float64(server.minflt)/float64(b.N), "server-minflt/row")
}

// checkCount fails b unless the table holds b.N rows (scan reads the
// count): a ceiling that wrote nothing would be a fast one.
func checkCount(b *testing.B, scan func(...any) error) {
	var n int64
	if err := scan(&n); err != nil {
		b.Fatal(err)
	}
	if n != int64(b.N) {
		b.Fatalf("the table holds %d rows, want %d", n, b.N)
	}
}

// sqliteArgs are the INSERT arguments of each row, bound as audit/sqlstore
// binds them (the time as Unix nanoseconds, JSON columns NULL when empty).
func sqliteArgs(rows []audit.Record) [][]driver.NamedValue {
	out := make([][]driver.NamedValue, len(rows))
	for i, r := range rows {
		vals := []driver.Value{r.Time.UnixNano(), string(r.Kind), r.CallID, r.RequestID, r.SessionID, r.Transport, r.Tool, r.Subject,
			string(r.Outcome), string(r.Code), r.Message, nil, int64(r.Duration), nil, nil, r.Method, r.Path, int64(r.Status),
			nil, r.TraceID, r.SpanID, int64(r.RequestBytes), int64(r.ResponseBytes), int64(r.ContentBlocks)}
		out[i] = make([]driver.NamedValue, len(vals))
		for j, v := range vals {
			out[i][j] = driver.NamedValue{Ordinal: j + 1, Value: v}
		}
	}
	return out
}

// pgValues are the COPY values of each row, of the Go types audit/sqlstore
// passes to pgx.
func pgValues(rows []audit.Record) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = []any{r.Time, string(r.Kind), r.CallID, r.RequestID, r.SessionID, r.Transport, r.Tool, r.Subject,
			string(r.Outcome), string(r.Code), r.Message, nil, int64(r.Duration), nil, nil, r.Method, r.Path, int32(r.Status),
			nil, r.TraceID, r.SpanID, int64(r.RequestBytes), int64(r.ResponseBytes), int32(r.ContentBlocks)}
	}
	return out
}

// prebuilt is a pgx.CopyFromSource of rows next to end, cycling through
// rows; only the timestamp is set per row (t0 plus the row's number), so
// that rows arrive in time order.
type prebuilt struct {
	rows      [][]any
	t0        time.Time
	next, end int
	cur       []any
}

func (p *prebuilt) Next() bool {
	if p.next >= p.end {
		return false
	}
	p.cur = p.rows[p.next&4095]
	p.cur[0] = p.t0.Add(time.Duration(p.next))
	p.next++
	return true
}

func (p *prebuilt) Values() ([]any, error) { return p.cur, nil }

func (p *prebuilt) Err() error { return nil }

// BenchmarkCeilingStore is the store alone on BenchmarkCeiling's rows:
// sqlstore's WriteBatch called with batches of storeBatch, without the
// async writer in front. Between the driver and the toolmw arm of
// BenchmarkCeiling it splits the writer's cost into the store's (encoding,
// sanitising, the COPY or INSERTs) and the queue's (Emit, the ring, the
// dispatch to the writing goroutine). Not part of bench/run's report.
func BenchmarkCeilingStore(b *testing.B) {
	for _, st := range stores() {
		b.Run(st.name, func(b *testing.B) {
			s, server := st.open(b)
			rows := auditRows(4096)
			batch := make([]audit.Record, storeBatch)
			ctx := context.Background()
			if server != nil {
				server.begin(b)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			t0 := time.Now()
			for done := 0; done < b.N; {
				n := min(storeBatch, b.N-done)
				for i := range n {
					batch[i] = rows[(done+i)&4095]
					batch[i].Time = t0.Add(time.Duration(done + i))
				}
				if err := s.WriteBatch(ctx, batch[:n]); err != nil {
					b.Fatal(err)
				}
				done += n
			}
			el, cpu := time.Since(start), cpuTime()-cpu0
			b.StopTimer()
			var srv procUse
			if server != nil {
				srv = server.use(b)
			}
			reportRows(b, b.N, el, cpu, srv.cpu, server != nil)
			if server != nil {
				reportFaults(b, srv)
			}
		})
	}
}

// BenchmarkCeilingServer is the PostgreSQL server's side of
// BenchmarkCeiling/postgres with the machine's load taken out of the
// ratio: the driver's CopyFrom (as postgres/driver) and the store's
// WriteBatch (as BenchmarkCeilingStore) write b.N rows each, batch by batch
// in turn (which of the two goes first alternates), each on a backend of
// its own, and each batch's CPU time and minor page faults are read from
// that backend's /proc around it. It reports each side's server CPU and
// faults per row and the ratio of their CPU (toolmw over driver): the
// per-count BenchmarkCeiling runs the driver, then the writer, seconds
// apart, and a loaded machine moves the server CPU of one more than the
// other's. Not part of bench/run's report.
func BenchmarkCeilingServer(b *testing.B) {
	dsn := pgDSN(b)
	ctx := context.Background()
	table := pgTable(b, dsn, "toolmw_ceiling")
	dMeter, dDSN := newPGCPU(b, dsn, table)
	s0, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: table})
	if err != nil {
		b.Fatal(err)
	}
	_ = s0.Close() // it made the table and its indexes
	conn, err := pgx.Connect(ctx, dDSN)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close(context.Background()) })
	st, tMeter := stores()[1].open(b)
	rows := auditRows(4096)
	src := &prebuilt{rows: pgValues(rows), t0: time.Now()}
	batch := make([]audit.Record, storeBatch)
	t0 := time.Now()
	driver := func(done, n int) error {
		src.next, src.end = done, done+n
		_, err := conn.CopyFrom(ctx, pgx.Identifier{table}, storeColumns, src)
		return err
	}
	store := func(done, n int) error {
		for i := range n {
			batch[i] = rows[(done+i)&4095]
			batch[i].Time = t0.Add(time.Duration(done + i))
		}
		return st.WriteBatch(ctx, batch[:n])
	}
	// A batch each before the count: each backend's first COPY fills its
	// caches. The store's backend is the one it wrote on: the one that
	// appeared with that write, or its only one.
	if err := driver(0, storeBatch); err != nil {
		b.Fatal(err)
	}
	before := tMeter.backends(b, false)
	if err := store(0, storeBatch); err != nil {
		b.Fatal(err)
	}
	dPID, tPID := newPID(b, dMeter, nil), newPID(b, tMeter, before)
	var dUse, tUse procUse
	measure := func(pid int, use *procUse, write func() error) {
		c0, ok0 := procCPU(pid)
		f0 := procMinflt(pid)
		if err := write(); err != nil {
			b.Fatal(err)
		}
		c1, ok1 := procCPU(pid)
		if !ok0 || !ok1 {
			b.Fatalf("cannot read the CPU time of backend %d", pid)
		}
		use.cpu += c1 - c0
		use.minflt += procMinflt(pid) - f0
	}
	b.ResetTimer()
	for done, k := 0, 0; done < b.N; k++ {
		n := min(storeBatch, b.N-done)
		at := storeBatch + done // after the first batch
		d := func() error { return driver(at, n) }
		s := func() error { return store(at, n) }
		if k%2 == 0 {
			measure(dPID, &dUse, d)
			measure(tPID, &tUse, s)
		} else {
			measure(tPID, &tUse, s)
			measure(dPID, &dUse, d)
		}
		done += n
	}
	b.StopTimer()
	per := func(v int64) float64 { return float64(v) / float64(b.N) }
	b.ReportMetric(per(int64(dUse.cpu)), "driver-server-cpu-ns/row")
	b.ReportMetric(per(int64(tUse.cpu)), "toolmw-server-cpu-ns/row")
	b.ReportMetric(float64(tUse.cpu)/float64(dUse.cpu), "server-cpu-ratio")
	b.ReportMetric(per(dUse.minflt), "driver-server-minflt/row")
	b.ReportMetric(per(tUse.minflt), "toolmw-server-minflt/row")
}

// newPID is the process id of m's one backend not in before, or of its
// only backend (a store that writes on the connection it was opened on).
func newPID(b *testing.B, m *pgCPU, before map[int]procUse) int {
	b.Helper()
	var pids []int
	all := m.backends(b, true)
	for pid := range all {
		if _, ok := before[pid]; !ok {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 && len(all) == 1 {
		for pid := range all {
			pids = append(pids, pid)
		}
	}
	if len(pids) != 1 {
		b.Fatalf("%d new backends with application_name %q, want 1", len(pids), m.app)
	}
	return pids[0]
}
