package bench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"math/rand/v2"
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

// ceilingStep is the rows one arm writes in one step of BenchmarkCeiling:
// eight batches of storeBatch, 80-170 ms of work on the AMD EPYC host.
// Short enough that the two steps of a pair see the same machine (its speed
// moves by tens of percent from one second to the next), long enough that
// the writer's start and its Close are a small part of it.
const ceilingStep = 8 * storeBatch

// BenchmarkCeiling puts toolmw's audit writer next to the fastest the
// database driver alone writes the same rows, so that the writer is judged
// as a share of what the store can take (issue 16: at least 0.9 of each
// ceiling). One op is a pair of steps, one of each arm, in an order drawn
// at random; each step writes ceilingStep rows of auditRows' shape (one in
// ten an internal error with its message; timestamps in order) in batches
// of storeBatch, and ends when its last row is committed. Each arm has its
// own table, which audit/sqlstore created, so with its columns and indexes,
// and which grows by the same rows as the other's:
//
//   - sqlite driver: modernc.org/sqlite on one connection, with the store's
//     pragmas; per batch one transaction, one prepared one-row INSERT
//     executed per row on the driver connection with prebuilt arguments
//     (only the timestamp is set per row).
//   - postgres driver: pgx CopyFrom on one connection, per batch, of
//     prebuilt rows (only the timestamp set per row).
//   - toolmw: an audit.NewAsync (Block policy, so that no row is dropped)
//     made before the step, into the sqlstore.Store; the step is its
//     ceilingStep Emits and its Close.
//
// A SQLite step also ends with a WAL checkpoint (TRUNCATE) of its file, so
// that each step does its own rows' checkpoint work, whichever batches the
// writer made: an automatic checkpoint (every 8,000 pages) would fall in
// one arm's step and not the other's.
//
// Judged per pair, the ratio cancels what the machine does to both steps,
// which a ratio of separate runs seconds apart does not: at 4470d28 the
// SQLite driver's own CPU per row moved from 6,972 to 10,135 ns between
// counts, and the ratio's interval was 0.730-1.067. It reports:
//
//   - ratio: the geometric mean of the pairs' toolmw/driver rows/s, and
//     log-ratio-sd the standard deviation of their logarithms (the report
//     makes the 95% interval from the two and the number of pairs);
//   - driver-rows/s and toolmw-rows/s: each arm's rows over its steps' time;
//   - driver-cpu-ns/row and toolmw-cpu-ns/row: this process's CPU per row
//     (every goroutine) in each arm's steps; for PostgreSQL also
//     driver-server-cpu-ns/row and toolmw-server-cpu-ns/row, the CPU of the
//     backends serving each arm (see pgCPU), read around each step.
//
// The PostgreSQL case needs TOOLMW_TEST_POSTGRES_DSN.
func BenchmarkCeiling(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		d, t := sqliteCeiling(b)
		ceilingPairs(b, d, t)
	})
	b.Run("postgres", func(b *testing.B) {
		d, t := postgresCeiling(b)
		ceilingPairs(b, d, t)
	})
}

// ceilingArm is one arm of BenchmarkCeiling.
type ceilingArm struct {
	// ready, when set, is called before each step, outside its time.
	ready func() error
	// write writes rows [from, from+ceilingStep) and returns once they are
	// committed.
	write func(from int) error
	// server, when set, is the CPU time so far of the database backends
	// serving the arm.
	server func() time.Duration
	// count is the number of rows in the arm's table.
	count func() (int64, error)
}

// armUse sums one arm's steps.
type armUse struct {
	wall, cpu, server time.Duration
}

// ceilingPairs runs b.N pairs of steps of driver and toolmw, each pair in
// an order drawn at random, and reports BenchmarkCeiling's figures.
func ceilingPairs(b *testing.B, driver, toolmw ceilingArm) {
	rng := rand.New(rand.NewPCG(uint64(b.N), 16))
	step := func(a ceilingArm, from int, use *armUse) time.Duration {
		if a.ready != nil {
			if err := a.ready(); err != nil {
				b.Fatal(err)
			}
		}
		var s0 time.Duration
		if a.server != nil {
			s0 = a.server()
		}
		start, cpu0 := time.Now(), cpuTime()
		if err := a.write(from); err != nil {
			b.Fatal(err)
		}
		el, cpu := time.Since(start), cpuTime()-cpu0
		use.wall += el
		use.cpu += cpu
		if a.server != nil {
			use.server += a.server() - s0
		}
		return el
	}
	var d, t armUse
	var sum, sumSq float64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		from := i * ceilingStep
		var dw, tw time.Duration
		if rng.IntN(2) == 0 {
			dw = step(driver, from, &d)
			tw = step(toolmw, from, &t)
		} else {
			tw = step(toolmw, from, &t)
			dw = step(driver, from, &d)
		}
		l := math.Log(float64(dw) / float64(tw)) // toolmw's rows/s over the driver's
		sum += l
		sumSq += l * l
	}
	b.StopTimer()
	rows := b.N * ceilingStep
	for _, a := range []ceilingArm{driver, toolmw} {
		n, err := a.count()
		if err != nil {
			b.Fatal(err)
		}
		if n != int64(rows) {
			b.Fatalf("a table holds %d rows, want %d: a ceiling that wrote nothing would be a fast one", n, rows)
		}
	}
	mean := sum / float64(b.N)
	b.ReportMetric(math.Exp(mean), "ratio")
	if b.N > 1 {
		b.ReportMetric(math.Sqrt(max(0, (sumSq-float64(b.N)*mean*mean)/float64(b.N-1))), "log-ratio-sd")
	}
	per := func(v time.Duration) float64 { return float64(v.Nanoseconds()) / float64(rows) }
	for _, a := range []struct {
		name string
		use  armUse
	}{{"driver", d}, {"toolmw", t}} {
		b.ReportMetric(float64(rows)/a.use.wall.Seconds(), a.name+"-rows/s")
		b.ReportMetric(per(a.use.cpu), a.name+"-cpu-ns/row")
		if driver.server != nil {
			b.ReportMetric(per(a.use.server), a.name+"-server-cpu-ns/row")
		}
	}
}

// toolmwCeiling is the toolmw arm into s: a new async writer before each
// step, its Emits and Close the step; after, when set, ends the step.
func toolmwCeiling(b *testing.B, s *sqlstore.Store, after func() error) ceilingArm {
	rows := auditRows(4096)
	ctx := context.Background()
	t0 := time.Now()
	var w *audit.Async
	return ceilingArm{
		ready: func() error {
			w = audit.NewAsync(s, audit.AsyncConfig{BatchSize: storeBatch, Policy: audit.Block, BlockTimeout: time.Minute,
				FallbackLogger: discardLogger(), Fallback: discardSink})
			return nil
		},
		write: func(from int) error {
			for i := from; i < from+ceilingStep; i++ {
				r := rows[i&4095]
				r.Time = t0.Add(time.Duration(i))
				w.Emit(ctx, r)
			}
			if err := w.Close(ctx); err != nil {
				return err
			}
			if got := w.Stats(); got.Written != ceilingStep {
				return fmt.Errorf("the writer wrote %d rows of %d: %+v", got.Written, ceilingStep, got)
			}
			if after != nil {
				return after()
			}
			return nil
		},
	}
}

// sqliteCeiling is BenchmarkCeiling's SQLite arms, each on a file of its own.
func sqliteCeiling(b *testing.B) (driverArm, toolmwArm ceilingArm) {
	ctx := context.Background()
	dir := b.TempDir()
	open := func(name string) (*sqlstore.Store, *sql.DB) {
		path := filepath.Join(dir, name)
		s, err := sqlstore.OpenSQLite(ctx, path, sqlstore.Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		db, err := sql.Open("sqlite", sqliteDSN(path))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = db.Close() })
		return s, db
	}
	count := func(db *sql.DB) func() (int64, error) {
		return func() (int64, error) {
			var n int64
			err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+sqlstore.DefaultTable+" WHERE kind <> 'probe'").Scan(&n)
			return n, err
		}
	}
	checkpoint := func(db *sql.DB) func() error {
		return func() error {
			_, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
			return err
		}
	}

	s, ddb := open("driver.db")
	_ = s.Close() // it made the table and its indexes; the driver writes
	conn, err := ddb.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	args := sqliteArgs(auditRows(4096))
	insert := "INSERT INTO " + sqlstore.DefaultTable + " (" + strings.Join(storeColumns, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(storeColumns)-1) + ")"
	t0 := time.Now().UnixNano()
	driverArm = ceilingArm{
		write: func(from int) error {
			err := conn.Raw(func(dc any) error {
				bt, pc := dc.(driver.ConnBeginTx), dc.(driver.ConnPrepareContext)
				for done := from; done < from+ceilingStep; done += storeBatch {
					tx, err := bt.BeginTx(ctx, driver.TxOptions{})
					if err != nil {
						return err
					}
					st, err := pc.PrepareContext(ctx, insert)
					if err != nil {
						return err
					}
					ex := st.(driver.StmtExecContext)
					for i := done; i < done+storeBatch; i++ {
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
				}
				return nil
			})
			if err != nil {
				return err
			}
			_, err = conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
			return err
		},
		count: count(ddb),
	}

	ts, tdb := open("toolmw.db")
	toolmwArm = toolmwCeiling(b, ts, checkpoint(tdb))
	toolmwArm.count = count(tdb)
	return driverArm, toolmwArm
}

// postgresCeiling is BenchmarkCeiling's PostgreSQL arms, each on a table and
// a meter of its own.
func postgresCeiling(b *testing.B) (driverArm, toolmwArm ceilingArm) {
	dsn := pgDSN(b)
	ctx := context.Background()
	count := func(table string) func() (int64, error) {
		return func() (int64, error) {
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				return 0, err
			}
			defer func() { _ = c.Close(ctx) }()
			var n int64
			err = c.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE kind <> 'probe'").Scan(&n)
			return n, err
		}
	}
	server := func(m *pgCPU) func() time.Duration {
		m.begin(b)
		return func() time.Duration { return m.since(b) }
	}

	table := pgTable(b, dsn, "toolmw_ceiling")
	meter, appDSN := newPGCPU(b, dsn, table)
	s, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: table})
	if err != nil {
		b.Fatal(err)
	}
	_ = s.Close() // it made the table and its indexes; the driver writes
	conn, err := pgx.Connect(ctx, appDSN)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close(context.Background()) })
	src := &prebuilt{rows: pgValues(auditRows(4096)), t0: time.Now()}
	driverArm = ceilingArm{
		write: func(from int) error {
			for done := from; done < from+ceilingStep; done += storeBatch {
				src.next, src.end = done, done+storeBatch
				copied, err := conn.CopyFrom(ctx, pgx.Identifier{table}, storeColumns, src)
				if err != nil {
					return err
				}
				if copied != storeBatch {
					return fmt.Errorf("copied %d rows of %d", copied, storeBatch)
				}
			}
			return nil
		},
		server: server(meter),
		count:  count(table),
	}

	st, tMeter := stores()[1].open(b)
	toolmwArm = toolmwCeiling(b, st, nil)
	toolmwArm.server = server(tMeter)
	toolmwArm.count = count(tMeter.app) // the store's meter is named after its table
	return driverArm, toolmwArm
}

// reportFaults reports the PostgreSQL backends' minor page faults per row
// (server-minflt/row): memory a backend gives back at the end of each COPY
// and faults in again at the next costs it CPU that the data does not
// explain (see sqlstore's keepCopyMemory).
func reportFaults(b *testing.B, server procUse) {
	b.ReportMetric(float64(server.minflt)/float64(b.N), "server-minflt/row")
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
// BenchmarkCeiling/postgres without the async writer, batch by batch: the
// driver's CopyFrom (as BenchmarkCeiling's driver arm) and the store's
// WriteBatch (as BenchmarkCeilingStore) write b.N rows each, batch by batch
// in turn (which of the two goes first alternates), each on a backend of
// its own, and each batch's CPU time and minor page faults are read from
// that backend's /proc around it. It reports each side's server CPU and
// faults per row and the ratio of their CPU (toolmw over driver): where
// BenchmarkCeiling's server figures differ, this tells the store's COPY
// from the writer's batching. Not part of bench/run's report.
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
