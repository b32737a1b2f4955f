package sqlstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

// TestPostgresWriterKeepsCopyMemory: the store's backend keeps each
// COPY's memory for the next instead of giving it back to the system and
// faulting it in again (keepCopyMemory), counted in minor page faults, not
// time. Three backends on the same table copy the same batches in turn:
// churn inserted a row before its first COPY (as the store's set-up
// connection does with its probe row), which leaves the COPY's memory at
// the top of its heap; kept did the same and then ran the store's
// statement by hand; the store's own is the third. The store's must fault
// like kept, not like churn. A server whose malloc gives nothing back
// (churn faulting about as little as kept) has nothing to show, and one on
// another machine cannot be read: the test is skipped there.
func TestPostgresWriterKeepsCopyMemory(t *testing.T) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	table := fmt.Sprintf("audit_mem%d", time.Now().UnixNano())
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	if !strings.Contains(dsn, "://") {
		sep = " "
	}
	s, err := OpenPostgres(ctx, dsn+sep+"pool_max_conns=1", Config{Table: table})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = s.Close()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
			_ = c.Close(ctx)
		}
	})
	var storePID int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&storePID))
	plain := func(keep bool) (*pgx.Conn, int) {
		c, err := pgx.Connect(ctx, dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close(ctx) })
		var pid int
		require.NoError(t, c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
		for _, q := range []string{"BEGIN", "INSERT INTO " + table + " (ts, kind, outcome, duration_ns) VALUES (now(), 'probe', 'ok', 0)", "ROLLBACK"} {
			_, err := c.Exec(ctx, q)
			require.NoError(t, err)
		}
		if keep {
			_, err = c.Exec(ctx, keepCopyMemorySQL)
			require.NoError(t, err)
		}
		return c, pid
	}
	churn, churnPID := plain(false)
	kept, keptPID := plain(true)
	for _, pid := range []int{storePID, churnPID, keptPID} {
		if _, ok := minorFaults(pid); !ok {
			t.Skip("the server's backends are not readable in /proc here (a server on another machine?)")
		}
	}

	const batch, rounds = 2048, 6
	rows := make([]audit.Record, batch)
	now := time.Now()
	for i := range rows {
		rows[i] = audit.Record{Time: now.Add(time.Duration(i)), Kind: audit.KindTool, CallID: "call-" + strconv.Itoa(i),
			SessionID: "session-1", Transport: "streamable-http", Tool: "search", Subject: "alice", Outcome: audit.OutcomeOK, Duration: time.Millisecond}
	}
	// The two plain connections send the store's own binary COPY.
	copyOn := func(c *pgx.Conn) func() {
		return func() {
			_, err := c.PgConn().CopyFrom(ctx, &pgCopy{batch: rows}, copySQL(table))
			require.NoError(t, err)
		}
	}
	type arm struct {
		name   string
		pid    int
		write  func()
		faults int64
	}
	arms := []*arm{
		{name: "store", pid: storePID, write: func() { require.NoError(t, s.WriteBatch(ctx, rows)) }},
		{name: "churn", pid: churnPID, write: copyOn(churn)},
		{name: "kept", pid: keptPID, write: copyOn(kept)},
	}
	for _, a := range arms {
		a.write() // the first COPY of each fills its caches
	}
	for r := range rounds {
		for i := range arms {
			a := arms[(i+r)%len(arms)]
			f0, _ := minorFaults(a.pid)
			a.write()
			f1, _ := minorFaults(a.pid)
			a.faults += f1 - f0
		}
	}
	per := func(a *arm) float64 { return float64(a.faults) / rounds }
	st, ch, kp := per(arms[0]), per(arms[1]), per(arms[2])
	t.Logf("minor faults per COPY of %d rows: store %.0f, churn %.0f, kept %.0f", batch, st, ch, kp)
	if ch < 1.3*kp {
		t.Skipf("this server's backends keep a COPY's memory anyway (churn %.0f faults per COPY, kept %.0f): nothing to compare", ch, kp)
	}
	require.Lessf(t, st, (ch+kp)/2, "the store's backend faults in each COPY's memory again, as one that inserted before its first COPY does (store %.0f, churn %.0f, kept %.0f per COPY)", st, ch, kp)
}

// minorFaults is the number of minor page faults of process pid so far,
// when pid is a PostgreSQL process of this machine.
func minorFaults(pid int) (int64, bool) {
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || !strings.HasPrefix(string(comm), "postgres") {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 8 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[7], 10, 64)
	return n, err == nil
}
