package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgCPU measures the CPU time of the PostgreSQL server processes that
// serve one benchmark's connections: the backends whose application_name
// is app (the benchmark's connections set it in their DSN, see appDSN).
// The server runs on this machine (the test DSN is a loopback address), so
// each backend's CPU time is in /proc/PID/schedstat (nanoseconds on a CPU)
// or, without it, /proc/PID/stat (user+system clock ticks). What it does
// not count: the server's shared processes (WAL writer, checkpointer,
// background writer), and a backend that exits during the measurement
// after its last reading (the benchmarks keep their connections open).
//
// It also counts the backends' minor page faults (/proc/PID/stat): a
// backend that gives memory back to the system at the end of each COPY
// and faults it in again at the next shows there (see sqlstore's
// keepCopyMemory), where its CPU time alone would not say why.
type pgCPU struct {
	mon   *pgx.Conn // a connection of its own, under another name
	app   string
	start map[int]procUse
}

// procUse is what a process has used so far.
type procUse struct {
	cpu    time.Duration
	minflt int64 // minor page faults
}

// newPGCPU connects the monitor and returns the DSN the benchmark's own
// connections must use.
func newPGCPU(tb testing.TB, dsn, app string) (*pgCPU, string) {
	tb.Helper()
	ctx := context.Background()
	mon, err := pgx.Connect(ctx, appDSN(dsn, app+"_monitor"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = mon.Close(context.Background()) })
	return &pgCPU{mon: mon, app: app}, appDSN(dsn, app)
}

// appDSN is dsn with application_name set to app, in either DSN form.
func appDSN(dsn, app string) string {
	if strings.Contains(dsn, "://") {
		if strings.Contains(dsn, "?") {
			return dsn + "&application_name=" + app
		}
		return dsn + "?application_name=" + app
	}
	return dsn + " application_name=" + app
}

// backends reads the CPU time and faults of each backend of m.app now;
// atLeastOne fails tb when there is none.
func (m *pgCPU) backends(tb testing.TB, atLeastOne bool) map[int]procUse {
	tb.Helper()
	rows, err := m.mon.Query(context.Background(), "SELECT pid FROM pg_stat_activity WHERE application_name = $1", m.app)
	if err != nil {
		tb.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		tb.Fatal(err)
	}
	out := make(map[int]procUse, len(pids))
	for _, pid := range pids {
		if d, ok := procCPU(int(pid)); ok {
			out[int(pid)] = procUse{cpu: d, minflt: procMinflt(int(pid))}
		}
	}
	if len(out) == 0 && atLeastOne {
		tb.Fatalf("no PostgreSQL backend with application_name %q readable in /proc (is the server on this machine?)", m.app)
	}
	return out
}

// begin takes the first reading. A store may have no connection yet (its
// pool opens them as it needs them): a backend started since counts from
// its start, its connection's setup included (about a millisecond, a
// hundredth of a microsecond per row of a 100,000-row run).
func (m *pgCPU) begin(tb testing.TB) { m.start = m.backends(tb, false) }

// since is the backends' CPU time since begin.
func (m *pgCPU) since(tb testing.TB) time.Duration { return m.use(tb).cpu }

// use is the backends' CPU time and minor faults since begin.
func (m *pgCPU) use(tb testing.TB) procUse {
	var d procUse
	for pid, t := range m.backends(tb, true) {
		s := m.start[pid] // a backend started since counts from 0
		d.cpu += t.cpu - s.cpu
		d.minflt += t.minflt - s.minflt
	}
	return d
}

// procMinflt is the number of minor page faults of process pid so far
// (field 10 of /proc/PID/stat), or 0 when it cannot be read.
func procMinflt(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 8 {
		return 0
	}
	n, _ := strconv.ParseInt(f[7], 10, 64)
	return n
}

// procCPU is the CPU time of process pid so far.
func procCPU(pid int) (time.Duration, bool) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid)); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return time.Duration(ns), true
			}
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis (utime and stime are fields 14 and 15).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const clockTick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(ut+st) * clockTick, true
}
