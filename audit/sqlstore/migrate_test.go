package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/toolctx"
)

// TestNotesAndTraceRoundTrip: a row's notes (in order, a key noted twice
// kept twice) and its trace and span ids are stored and read back, on both
// stores; a row without them reads back without them.
func TestNotesAndTraceRoundTrip(t *testing.T) {
	notes := []toolctx.Note{{Key: "attempts", Value: "3"}, {Key: "scrubbed", Value: "aws-key,github-token"},
		{Key: "attempts", Value: "4"}, {Key: "odd", Value: "quote \" and \x00 and é"}}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s, _ := b.open(t)
			ctx := context.Background()
			now := time.Now()
			require.NoError(t, s.WriteBatch(ctx, []audit.Record{
				{Time: now, Kind: audit.KindTool, CallID: "n1", Tool: "t", Outcome: audit.OutcomeOK, Notes: notes,
					TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331"},
				{Time: now.Add(time.Millisecond), Kind: audit.KindTool, CallID: "n2", Tool: "t", Outcome: audit.OutcomeOK},
			}), "write")
			got, err := s.Query(ctx, sqlstore.Query{CallID: "n1"})
			require.NoError(t, err, "query")
			require.Len(t, got, 1, "the row")
			want := notes
			if b.name == "postgres" {
				want = append([]toolctx.Note(nil), notes...)
				want[3].Value = "quote \" and \uFFFD and é" // PostgreSQL stores no NUL
			}
			assert.Equal(t, want, got[0].Notes, "the notes, in order")
			assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", got[0].TraceID, "the trace id")
			assert.Equal(t, "b7ad6b7169203331", got[0].SpanID, "the span id")
			got, err = s.Query(ctx, sqlstore.Query{CallID: "n2"})
			require.NoError(t, err, "query")
			require.Len(t, got, 1, "the row")
			assert.Nil(t, got[0].Notes, "no notes")
			assert.Empty(t, got[0].TraceID+got[0].SpanID, "no span")
		})
	}
}

// The version-2 layout, as toolmw wrote it before version 3: the tests
// below make an old database with it by hand.
var (
	sqliteV2DDL = []string{
		`CREATE TABLE toolmw_audit_schema (version INTEGER NOT NULL)`,
		`CREATE TABLE toolmw_audit (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, kind TEXT NOT NULL,
			call_id TEXT NOT NULL DEFAULT '', request_id TEXT NOT NULL DEFAULT '', session_id TEXT NOT NULL DEFAULT '',
			transport TEXT NOT NULL DEFAULT '', tool TEXT NOT NULL DEFAULT '', subject TEXT NOT NULL DEFAULT '',
			outcome TEXT NOT NULL, code TEXT NOT NULL DEFAULT '', message TEXT NOT NULL DEFAULT '', detail TEXT,
			duration_ns INTEGER NOT NULL, client_meta TEXT, arguments TEXT, method TEXT NOT NULL DEFAULT '',
			path TEXT NOT NULL DEFAULT '', status INTEGER NOT NULL DEFAULT 0)`,
		`CREATE INDEX toolmw_audit_ts ON toolmw_audit (ts)`,
		`INSERT INTO toolmw_audit_schema (version) VALUES (1)`,
		`CREATE TABLE toolmw_audit_batches (spool TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (spool, seq)) WITHOUT ROWID`,
		`INSERT INTO toolmw_audit_schema (version) VALUES (2)`,
		`INSERT INTO toolmw_audit (ts, kind, call_id, tool, outcome, code, message, duration_ns)
			VALUES (1700000000000000000, 'tool', 'old1', 'search', 'error', 'internal', 'written by v2', 1000)`,
	}
	postgresV2DDL = []string{
		`CREATE TABLE toolmw_audit_schema (version integer NOT NULL)`,
		`CREATE TABLE toolmw_audit (id bigint GENERATED ALWAYS AS IDENTITY, ts timestamptz NOT NULL, kind text NOT NULL,
			call_id text NOT NULL DEFAULT '', request_id text NOT NULL DEFAULT '', session_id text NOT NULL DEFAULT '',
			transport text NOT NULL DEFAULT '', tool text NOT NULL DEFAULT '', subject text NOT NULL DEFAULT '',
			outcome text NOT NULL, code text NOT NULL DEFAULT '', message text NOT NULL DEFAULT '', detail jsonb,
			duration_ns bigint NOT NULL, client_meta jsonb, arguments jsonb, method text NOT NULL DEFAULT '',
			path text NOT NULL DEFAULT '', status integer NOT NULL DEFAULT 0)`,
		`CREATE INDEX toolmw_audit_ts ON toolmw_audit USING brin (ts)`,
		`CREATE INDEX toolmw_audit_tool_ts ON toolmw_audit (tool, ts)`,
		`INSERT INTO toolmw_audit_schema (version) VALUES (1)`,
		`CREATE TABLE toolmw_audit_batches (spool text NOT NULL, seq bigint NOT NULL, PRIMARY KEY (spool, seq))`,
		`CREATE INDEX toolmw_audit_call_id ON toolmw_audit (call_id) WHERE call_id <> ''`,
		`INSERT INTO toolmw_audit_schema (version) VALUES (2)`,
		`INSERT INTO toolmw_audit (ts, kind, call_id, tool, outcome, code, message, duration_ns)
			VALUES ('2023-11-14T22:13:20Z', 'tool', 'old1', 'search', 'error', 'internal', 'written by v2', 1000)`,
	}
)

// checkMigration runs the version-2 checks on a store opened over a
// database that ddl made: a reader reads the old row and changes nothing;
// a writer upgrades the table to version 3, keeps the old row, and stores
// a new row's notes and trace ids. version and columns read the database.
func checkMigration(t *testing.T, open func(sqlstore.Config) (*sqlstore.Store, error),
	version func() int64, columns func() map[string]bool) {
	ctx := context.Background()
	r, err := open(sqlstore.Config{ReadOnly: true})
	require.NoError(t, err, "a reader opens a version-2 table")
	got, err := r.Query(ctx, sqlstore.Query{})
	require.NoError(t, err, "a reader reads a version-2 table")
	require.Equal(t, []string{"old1"}, callIDs(got), "the old row")
	assert.Equal(t, "written by v2", got[0].Message, "the old row's message")
	assert.Nil(t, got[0].Notes, "an old row has no notes")
	assert.Empty(t, got[0].TraceID, "an old row has no trace id")
	require.NoError(t, r.Close())
	assert.Equal(t, int64(2), version(), "the reader did not upgrade the table")
	assert.False(t, columns()["notes"], "the reader added no column")

	w, err := open(sqlstore.Config{})
	require.NoError(t, err, "a writer opens a version-2 table and upgrades it")
	defer w.Close()
	assert.Equal(t, int64(sqlstore.SchemaVersion), version(), "the table is at the current version")
	for _, c := range []string{"notes", "trace_id", "span_id"} {
		assert.True(t, columns()[c], "the column %s was added", c)
	}
	require.NoError(t, w.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, CallID: "new1", Tool: "search",
		Outcome: audit.OutcomeOK, Notes: []toolctx.Note{{Key: "cache", Value: "hit"}}, TraceID: "0af7651916cd43dd8448eb211c80319c",
		SpanID: "b7ad6b7169203331"}}), "the upgraded table takes a new row")
	got, err = w.Query(ctx, sqlstore.Query{})
	require.NoError(t, err, "query the upgraded table")
	require.Equal(t, []string{"new1", "old1"}, callIDs(got), "the new row and the old one")
	assert.Equal(t, []toolctx.Note{{Key: "cache", Value: "hit"}}, got[0].Notes, "the new row's notes")
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", got[0].TraceID, "the new row's trace id")
	assert.Equal(t, "b7ad6b7169203331", got[0].SpanID, "the new row's span id")
	assert.Nil(t, got[1].Notes, "the old row still has no notes")
	assert.Equal(t, "written by v2", got[1].Message, "the old row is unchanged")

	again, err := open(sqlstore.Config{})
	require.NoError(t, err, "opening the upgraded table again")
	require.NoError(t, again.Close())
	assert.Equal(t, int64(sqlstore.SchemaVersion), version(), "opening again changes nothing")
}

func TestSQLiteMigratesVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	defer db.Close()
	for _, q := range sqliteV2DDL {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	ctx := context.Background()
	checkMigration(t, func(o sqlstore.Config) (*sqlstore.Store, error) { return sqlstore.OpenSQLite(ctx, path, o) },
		func() int64 {
			var v int64
			require.NoError(t, db.QueryRow("SELECT MAX(version) FROM toolmw_audit_schema").Scan(&v))
			return v
		},
		func() map[string]bool {
			rows, err := db.Query("SELECT name FROM pragma_table_info('toolmw_audit')")
			require.NoError(t, err)
			defer rows.Close()
			have := map[string]bool{}
			for rows.Next() {
				var n string
				require.NoError(t, rows.Scan(&n))
				have[n] = true
			}
			return have
		})
}

func TestPostgresMigratesVersion2(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	// A schema of its own, so that the table can have the default name.
	schema := uniqueTable()
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	defer c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	_, err = c.Exec(ctx, "SET search_path TO "+schema)
	require.NoError(t, err)
	for _, q := range postgresV2DDL {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	sdsn := dsn + "&search_path=" + schema
	checkMigration(t, func(o sqlstore.Config) (*sqlstore.Store, error) { return sqlstore.OpenPostgres(ctx, sdsn, o) },
		func() int64 {
			var v int64
			require.NoError(t, c.QueryRow(ctx, "SELECT MAX(version) FROM toolmw_audit_schema").Scan(&v))
			return v
		},
		func() map[string]bool {
			rows, err := c.Query(ctx, "SELECT attname FROM pg_attribute WHERE attrelid = 'toolmw_audit'::regclass AND attnum > 0 AND NOT attisdropped")
			require.NoError(t, err)
			defer rows.Close()
			have := map[string]bool{}
			for rows.Next() {
				var n string
				require.NoError(t, rows.Scan(&n))
				have[n] = true
			}
			return have
		})
	for col, idx := range map[string]string{"call_id": "toolmw_audit_call_id", "tool": "toolmw_audit_tool_ts"} {
		var collation string
		var index *string
		require.NoError(t, c.QueryRow(ctx, `SELECT COALESCE(collation_name, ''), to_regclass($3)::text
			FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'toolmw_audit' AND column_name = $2`,
			schema, col, idx).Scan(&collation, &index), "collation and index")
		assert.Equal(t, "C", collation, "the upgrade makes %s compare bytes", col)
		assert.NotNil(t, index, "the index %s is still there", idx)
	}
}

// TestStartChecksIncludeVersion3Columns: a table that says version 3 but
// lacks a column of version 3 is refused at start by a writer ("lacks the
// columns ... notes") and by a reader ("not a toolmw audit database"); a
// table that says version 2 but is not a toolmw table is refused untouched
// (no column added to it).
func TestStartChecksIncludeVersion3Columns(t *testing.T) {
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "v3.db")
		s, err := sqlstore.OpenSQLite(ctx, path, sqlstore.Config{})
		require.NoError(t, err)
		require.NoError(t, s.Close())
		db, err := sql.Open("sqlite", "file:"+path)
		require.NoError(t, err)
		defer db.Close()
		_, err = db.Exec("ALTER TABLE toolmw_audit DROP COLUMN notes")
		require.NoError(t, err)
		_, err = sqlstore.OpenSQLite(ctx, path, sqlstore.Config{})
		require.ErrorContains(t, err, "lacks the columns notes", "the writer refuses")
		_, err = sqlstore.OpenSQLite(ctx, path, sqlstore.Config{ReadOnly: true})
		require.ErrorIs(t, err, sqlstore.ErrNotAudit, "the reader refuses")
		assert.ErrorContains(t, err, "notes", "the reader names the column")

		other := filepath.Join(t.TempDir(), "other.db")
		odb, err := sql.Open("sqlite", "file:"+other)
		require.NoError(t, err)
		defer odb.Close()
		for _, q := range []string{"CREATE TABLE toolmw_audit_schema (version INTEGER NOT NULL)", "INSERT INTO toolmw_audit_schema VALUES (2)",
			"CREATE TABLE toolmw_audit (id INTEGER PRIMARY KEY, ts INTEGER, kind TEXT)"} {
			_, err = odb.Exec(q)
			require.NoError(t, err, q)
		}
		_, err = sqlstore.OpenSQLite(ctx, other, sqlstore.Config{})
		require.ErrorContains(t, err, "lacks the columns", "a foreign table under version 2 is refused")
		var n int
		require.NoError(t, odb.QueryRow("SELECT COUNT(*) FROM pragma_table_info('toolmw_audit')").Scan(&n))
		assert.Equal(t, 3, n, "and left as it was")
	})
	t.Run("postgres", func(t *testing.T) {
		s, _ := pgBackend().open(t)
		dsn := pgDSN(t)
		c, err := pgx.Connect(ctx, dsn)
		require.NoError(t, err)
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "ALTER TABLE "+s.Table()+" DROP COLUMN span_id")
		require.NoError(t, err)
		_, err = sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: s.Table()})
		require.ErrorContains(t, err, "lacks the columns span_id", "the writer refuses")
		_, err = sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: s.Table(), ReadOnly: true})
		require.ErrorIs(t, err, sqlstore.ErrNotAudit, "the reader refuses")
		assert.ErrorContains(t, err, "span_id", "the reader names the column")

		other := uniqueTable()
		defer c.Exec(ctx, "DROP TABLE IF EXISTS "+other+", "+other+"_schema, "+other+"_batches")
		for _, q := range []string{"CREATE TABLE " + other + "_schema (version integer NOT NULL)", "INSERT INTO " + other + "_schema VALUES (2)",
			"CREATE TABLE " + other + " (id bigint, ts timestamptz, kind text)"} {
			_, err = c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		_, err = sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: other})
		require.ErrorContains(t, err, "lacks the columns", "a foreign table under version 2 is refused")
		var n int
		require.NoError(t, c.QueryRow(ctx, "SELECT COUNT(*) FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped", other).Scan(&n))
		assert.Equal(t, 3, n, "and left as it was")
	})
}
