package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
)

func TestRoundTripAndQuery(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s, _ := b.open(t)
			ctx := context.Background()
			base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			rows := []audit.Record{
				{Time: base, Kind: audit.KindTool, CallID: "c1", Tool: "search", Outcome: audit.OutcomeOK, Duration: 3 * time.Millisecond,
					RequestID: "r1", SessionID: "s1", Transport: "stdio", Subject: "alice"},
				{Time: base.Add(time.Second), Kind: audit.KindTool, CallID: "c2", Tool: "search", Outcome: audit.OutcomeError,
					Code: errs.CodeInternal, Message: "dial tcp: refused", Duration: time.Millisecond,
					ClientMeta: map[string]any{"trace": "t1"}, Arguments: json.RawMessage(`{"q":"x"}`)},
				{Time: base.Add(2 * time.Second), Kind: audit.KindTool, CallID: "c3", Tool: "fetch", Outcome: audit.OutcomeRejected,
					Code: errs.CodeInvalidArguments, Message: "url: required", Detail: map[string]any{"field": "url"}},
				{Time: base.Add(3 * time.Second), Kind: audit.KindHTTP, Method: "POST", Path: "/mcp", Status: 401,
					Outcome: audit.OutcomeRejected, Code: errs.CodeUnauthenticated, Message: "Unauthorized", RequestID: "r9"},
				{Time: base.Add(4 * time.Second), Kind: audit.KindTool, CallID: "c4", Tool: "search", Outcome: audit.OutcomeError,
					Code: errs.CodeInternal, Message: "second failure", Arguments: json.RawMessage(`not json`)},
			}
			require.NoError(t, s.WriteBatch(ctx, rows))

			got, err := s.Query(ctx, sqlstore.Query{})
			require.NoError(t, err)
			require.Len(t, got, 5)
			assert.Equal(t, []string{"c4", "", "c3", "c2", "c1"}, callIDs(got), "newest first")

			got, err = s.Query(ctx, sqlstore.Query{Tool: "search", Outcome: audit.OutcomeError, Code: errs.CodeInternal})
			require.NoError(t, err)
			assert.Equal(t, []string{"c4", "c2"}, callIDs(got))
			c2 := got[1]
			assert.True(t, c2.Time.Equal(rows[1].Time))
			assert.Equal(t, "dial tcp: refused", c2.Message)
			assert.Equal(t, time.Millisecond, c2.Duration)
			assert.Equal(t, map[string]any{"trace": "t1"}, c2.ClientMeta)
			assert.JSONEq(t, `{"q":"x"}`, string(c2.Arguments))
			assert.JSONEq(t, `"not json"`, string(got[0].Arguments), "invalid JSON arguments are kept as a string")

			got, err = s.Query(ctx, sqlstore.Query{Since: base.Add(time.Second), Until: base.Add(3 * time.Second)})
			require.NoError(t, err)
			assert.Equal(t, []string{"c3", "c2"}, callIDs(got))
			assert.Equal(t, map[string]any{"field": "url"}, got[0].Detail)

			got, err = s.Query(ctx, sqlstore.Query{Kind: audit.KindHTTP})
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, 401, got[0].Status)
			assert.Equal(t, "POST", got[0].Method)
			assert.Equal(t, "/mcp", got[0].Path)

			got, err = s.Query(ctx, sqlstore.Query{Limit: 2})
			require.NoError(t, err)
			assert.Len(t, got, 2)

			got, err = s.Query(ctx, sqlstore.Query{CallID: "c1"})
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, "alice", got[0].Subject)
			assert.Equal(t, "stdio", got[0].Transport)
			assert.Equal(t, "r1", got[0].RequestID)
			assert.Equal(t, "s1", got[0].SessionID)
			assert.Nil(t, got[0].Detail)
			assert.Nil(t, got[0].Arguments)

			n, err := s.Count(ctx, sqlstore.Query{Tool: "search"})
			require.NoError(t, err)
			assert.Equal(t, int64(3), n)
		})
	}
}

func callIDs(rs []audit.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.CallID
	}
	return out
}

func TestSQLiteOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	_, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "missing", "audit.db"), sqlstore.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not exist")

	_, err = sqlstore.OpenSQLite(ctx, dir, sqlstore.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a directory")

	file := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	_, err = sqlstore.OpenSQLite(ctx, filepath.Join(file, "audit.db"), sqlstore.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a directory")

	_, err = sqlstore.OpenSQLite(ctx, "", sqlstore.Config{})
	require.Error(t, err)

	_, err = sqlstore.OpenSQLite(ctx, filepath.Join(dir, "a.db"), sqlstore.Config{Table: "audit; DROP TABLE x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid table name")

	notDB := filepath.Join(dir, "garbage.db")
	require.NoError(t, os.WriteFile(notDB, []byte(strings.Repeat("this is not a database ", 100)), 0o600))
	_, err = sqlstore.OpenSQLite(ctx, notDB, sqlstore.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), notDB)
	t.Log(err)
}

func TestSQLiteReadOnlyDirectory(t *testing.T) {
	dir := "/sys" // root writes to a 0555 directory, but nobody creates files in sysfs (CI runs as root)
	if os.Geteuid() != 0 {
		dir = t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o555))
		defer os.Chmod(dir, 0o755)
	} else if f, err := os.CreateTemp(dir, ".toolmw-probe-*"); err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Skip("running as root, and /sys is writable here: no read-only directory to test with")
	}
	_, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(dir, "audit.db"), sqlstore.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not writable")
}

func TestSQLiteReadOnlyOpenOfAnUnrelatedFile(t *testing.T) {
	// "?mode=ro" opens read-only, and an unrelated SQLite file is refused
	// without a table being created in it.
	dir := t.TempDir()
	path := filepath.Join(dir, "ro.db")
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	_, err = db.Exec("CREATE TABLE other (x INTEGER)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = sqlstore.OpenSQLite(context.Background(), path+"?mode=ro", sqlstore.Config{})
	require.ErrorIs(t, err, sqlstore.ErrNotAudit)
	assert.Contains(t, err.Error(), path, "the error names the file")
	t.Log(err)
}

// TestSQLiteWriterFailsAtStart: a table of the wrong shape under a
// matching schema version, and a damaged file, are refused by OpenSQLite
// with one line naming the file and what to do, not at the first write.
func TestSQLiteWriterFailsAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wrong := filepath.Join(dir, "wrong.db")
	db, err := sql.Open("sqlite", "file:"+wrong)
	require.NoError(t, err)
	for _, q := range []string{
		"CREATE TABLE toolmw_audit_schema (version INTEGER NOT NULL)",
		"INSERT INTO toolmw_audit_schema VALUES (2)",
		"CREATE TABLE toolmw_audit (id INTEGER PRIMARY KEY, ts INTEGER, kind TEXT, note TEXT)",
		"CREATE TABLE toolmw_audit_batches (spool TEXT, seq INTEGER, PRIMARY KEY (spool, seq))",
	} {
		_, err = db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())
	_, err = sqlstore.OpenSQLite(ctx, wrong, sqlstore.Config{})
	require.Error(t, err, "a table of the wrong shape")
	assert.Contains(t, err.Error(), wrong)
	assert.Contains(t, err.Error(), "lacks the columns")
	assert.NotContains(t, err.Error(), "\n", "one line")
	t.Log(err)

	damaged := filepath.Join(dir, "damaged.db")
	s, err := sqlstore.OpenSQLite(ctx, damaged, sqlstore.Config{})
	require.NoError(t, err)
	rows := make([]audit.Record, 2000)
	for i := range rows {
		rows[i] = audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: fmt.Sprint(i), Tool: "t", Outcome: audit.OutcomeOK,
			Message: strings.Repeat("m", 200)}
	}
	require.NoError(t, s.WriteBatch(ctx, rows))
	require.NoError(t, s.Close())
	f, err := os.OpenFile(damaged, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(strings.Repeat("\xff", 4096)), 8*4096) // a page in the middle of the table
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = sqlstore.OpenSQLite(ctx, damaged, sqlstore.Config{})
	require.Error(t, err, "a damaged file")
	assert.Contains(t, err.Error(), damaged)
	t.Log(err)
}

// TestSQLiteReaderOnAReadOnlyDirectory: Config.ReadOnly reads a database
// in a directory nobody can write (a read-only tmpfs as root; a 0555
// directory otherwise) and changes nothing.
func TestSQLiteReaderOnAReadOnlyDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
			t.Skipf("running as root without a read-only directory to test with: cannot mount a tmpfs: %v", err)
		}
		t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	}
	path := filepath.Join(dir, "audit.db")
	s, err := sqlstore.OpenSQLite(ctx, path, sqlstore.Config{})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, CallID: "c1", Tool: "t", Outcome: audit.OutcomeOK}}))
	require.NoError(t, s.Close())
	if os.Geteuid() == 0 {
		require.NoError(t, syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""), "remount read-only")
	} else {
		require.NoError(t, os.Chmod(path, 0o444))
		require.NoError(t, os.Chmod(dir, 0o555))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	}
	_, err = sqlstore.OpenSQLite(ctx, path, sqlstore.Config{})
	require.Error(t, err, "the writer refuses at start")
	t.Log(err)
	r, err := sqlstore.OpenSQLite(ctx, path, sqlstore.Config{ReadOnly: true})
	require.NoError(t, err, "the reader reads")
	defer r.Close()
	got, err := r.Query(ctx, sqlstore.Query{})
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, callIDs(got))
	assert.ErrorContains(t, r.WriteBatch(ctx, got), "read-only", "a read-only store does not write")
}

func TestSQLiteSchemaIdempotentWALAndNewer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	for i := 0; i < 3; i++ {
		s, err := sqlstore.OpenSQLite(ctx, path, sqlstore.Config{})
		require.NoError(t, err, "open #%d", i)
		require.NoError(t, s.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, CallID: "x", Outcome: audit.OutcomeOK}}))
		require.NoError(t, s.Close())
	}
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	var mode string
	require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	var n, versions int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM toolmw_audit").Scan(&n))
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM toolmw_audit_schema").Scan(&versions))
	assert.Equal(t, 3, n)
	assert.Equal(t, 4, versions, "versions 1 to 4, once each")

	_, err = db.Exec("INSERT INTO toolmw_audit_schema (version) VALUES (99)")
	require.NoError(t, err)
	_, err = sqlstore.OpenSQLite(ctx, path, sqlstore.Config{})
	require.ErrorIs(t, err, sqlstore.ErrNewerSchema)
	assert.Contains(t, err.Error(), "version 99")
	assert.Contains(t, err.Error(), "toolmw_audit")
}

func TestPostgresOpenErrorsAndSchema(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()

	_, err := sqlstore.OpenPostgres(ctx, "postgres://u:secretpw@host:notaport/db", sqlstore.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "DSN cannot be parsed")
	assert.NotContains(t, err.Error(), "secretpw")

	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = sqlstore.OpenPostgres(cctx, "postgres://postgres@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", sqlstore.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot connect to 127.0.0.1:1")

	table := uniqueTable()
	for i := 0; i < 2; i++ {
		s, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: table})
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	defer c.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
	var versions int
	require.NoError(t, c.QueryRow(ctx, "SELECT COUNT(*) FROM "+table+"_schema").Scan(&versions))
	assert.Equal(t, 4, versions, "versions 1 to 4, once each: opening twice changes nothing")
	_, err = c.Exec(ctx, "INSERT INTO "+table+"_schema (version) VALUES (7)")
	require.NoError(t, err)
	_, err = sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: table})
	require.ErrorIs(t, err, sqlstore.ErrNewerSchema)
}

// TestNewestRowsAcrossTime checks that the newest rows come back whatever
// their age: PostgreSQL reads the last hour, then the rest of the last
// day, before the whole table, and must give the same answer as reading the
// whole table at once, wherever the limit falls.
func TestNewestRowsAcrossTime(t *testing.T) {
	now := time.Now()
	ages := []time.Duration{ // newest first; a negative age is a clock ahead
		-time.Minute, 10 * time.Minute, 2 * time.Hour, 3 * 24 * time.Hour,
		20 * 24 * time.Hour, 200 * 24 * time.Hour, 800 * 24 * time.Hour,
	}
	var rows, want []audit.Record
	for i, age := range ages {
		r := audit.Record{Time: now.Add(-age), Kind: audit.KindTool, CallID: fmt.Sprintf("c%d", i), Tool: "search",
			Outcome: audit.OutcomeOK, Duration: time.Millisecond}
		if i%2 == 1 {
			r.Outcome, r.Code, r.Message = audit.OutcomeError, errs.CodeInternal, "refused"
		}
		rows = append(rows, r)
		want = append(want, r)
	}
	slices.Reverse(rows) // written oldest first, as they arrive
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s, _ := b.open(t)
			ctx := context.Background()
			require.NoError(t, s.WriteBatch(ctx, rows), "write")
			for limit := 1; limit <= len(ages)+1; limit++ {
				got, err := s.Query(ctx, sqlstore.Query{Kind: audit.KindTool, Limit: limit})
				require.NoError(t, err, "limit %d", limit)
				assert.Equal(t, callIDs(want[:min(limit, len(want))]), callIDs(got), "the %d newest rows", limit)
			}
			got, err := s.Query(ctx, sqlstore.Query{Outcome: audit.OutcomeError, Limit: 3})
			require.NoError(t, err, "errors")
			assert.Equal(t, []string{"c1", "c3", "c5"}, callIDs(got), "the 3 newest failures, down to 200 days old")

			got, err = s.Query(ctx, sqlstore.Query{Until: now.Add(-time.Hour), Limit: 2})
			require.NoError(t, err, "until")
			assert.Equal(t, []string{"c2", "c3"}, callIDs(got), "the newest before Until")

			for _, id := range []string{"c0", "c6"} {
				got, err = s.Query(ctx, sqlstore.Query{CallID: id})
				require.NoError(t, err, "call id %s", id)
				assert.Equal(t, []string{id}, callIDs(got), "call %s found, however old", id)
			}
			got, err = s.Query(ctx, sqlstore.Query{CallID: "nope"})
			require.NoError(t, err, "unknown call id")
			assert.Empty(t, got, "an unknown call id finds nothing")
		})
	}
}

// TestPostgresReaderAndStartChecks: a read-only open of a table that is
// not there says "not a toolmw audit database" and creates nothing; a
// writer refuses a table of the wrong shape under a matching version; a
// read-only open of a real table reads it in a read-only transaction.
func TestPostgresReaderAndStartChecks(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	nosuch := uniqueTable()
	_, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: nosuch, ReadOnly: true})
	require.ErrorIs(t, err, sqlstore.ErrNotAudit)
	assert.Contains(t, err.Error(), nosuch, "the error names the table")
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	var reg *string
	require.NoError(t, c.QueryRow(ctx, "SELECT to_regclass($1)::text", nosuch+"_schema").Scan(&reg))
	assert.Nil(t, reg, "the reader created no table")

	wrong := uniqueTable()
	defer c.Exec(ctx, "DROP TABLE IF EXISTS "+wrong+", "+wrong+"_schema, "+wrong+"_batches")
	for _, q := range []string{
		"CREATE TABLE " + wrong + "_schema (version integer NOT NULL)",
		"INSERT INTO " + wrong + "_schema VALUES (2)",
		"CREATE TABLE " + wrong + " (id bigint, ts timestamptz, note text)",
	} {
		_, err = c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: wrong})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lacks the columns")
	assert.Contains(t, err.Error(), wrong)
	_, err = sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: wrong, ReadOnly: true})
	require.ErrorIs(t, err, sqlstore.ErrNotAudit)

	s, _ := pgBackend().open(t)
	require.NoError(t, s.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, CallID: "p1", Tool: "t", Outcome: audit.OutcomeOK}}))
	r, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: s.Table(), ReadOnly: true})
	require.NoError(t, err)
	defer r.Close()
	got, err := r.Query(ctx, sqlstore.Query{CallID: "p1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"p1"}, callIDs(got))
	assert.ErrorContains(t, r.WriteBatch(ctx, got), "read-only")
}
