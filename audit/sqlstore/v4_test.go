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
)

// The version-3 statements after version 2, as toolmw wrote them, and a
// ledger entry of a batch written whole under version 3.
var (
	sqliteV3DDL = append(append([]string(nil), sqliteV2DDL...),
		`ALTER TABLE toolmw_audit ADD COLUMN notes TEXT`,
		`ALTER TABLE toolmw_audit ADD COLUMN trace_id TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE toolmw_audit ADD COLUMN span_id TEXT NOT NULL DEFAULT ''`,
		`INSERT INTO toolmw_audit_schema (version) VALUES (3)`,
		`INSERT INTO toolmw_audit_batches (spool, seq) VALUES ('legacy', 7)`)
	postgresV3DDL = append(append([]string(nil), postgresV2DDL...),
		`ALTER TABLE toolmw_audit ADD COLUMN notes jsonb, ADD COLUMN trace_id text NOT NULL DEFAULT '',
			ADD COLUMN span_id text NOT NULL DEFAULT '', ALTER COLUMN call_id TYPE text COLLATE "C", ALTER COLUMN tool TYPE text COLLATE "C"`,
		`INSERT INTO toolmw_audit_schema (version) VALUES (3)`,
		`INSERT INTO toolmw_audit_batches (spool, seq) VALUES ('legacy', 7)`)
)

// checkMigrationV4 checks a store over a version-3 database: a reader reads
// the old row with zero sizes and upgrades nothing; a writer upgrades to
// version 4, keeps the old row, stores a new row's sizes, and still takes
// the version-3 ledger entry for a whole batch (a replay of it, whole or
// in part, writes nothing).
func checkMigrationV4(t *testing.T, open func(sqlstore.Config) (*sqlstore.Store, error), raw func(q string) int64) {
	ctx := context.Background()
	r, err := open(sqlstore.Config{ReadOnly: true})
	require.NoError(t, err, "a reader opens a version-3 table")
	got, err := r.Query(ctx, sqlstore.Query{})
	require.NoError(t, err, "a reader reads a version-3 table")
	require.Equal(t, []string{"old1"}, callIDs(got), "the old row")
	assert.Zero(t, got[0].RequestBytes+got[0].ResponseBytes+got[0].ContentBlocks, "an old row has no sizes")
	require.NoError(t, r.Close())
	assert.Equal(t, int64(3), raw("SELECT MAX(version) FROM toolmw_audit_schema"), "the reader did not upgrade the table")

	w, err := open(sqlstore.Config{})
	require.NoError(t, err, "a writer opens a version-3 table and upgrades it")
	defer w.Close()
	assert.Equal(t, int64(4), raw("SELECT MAX(version) FROM toolmw_audit_schema"), "the table is at version 4")
	assert.Equal(t, int64(1), raw("SELECT COUNT(*) FROM toolmw_audit_batches WHERE spool = 'legacy' AND seq = 7 AND first_row = 0"),
		"the old ledger entry is kept, as a whole batch")

	row := audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: "replayed", Tool: "search", Outcome: audit.OutcomeOK}
	for _, first := range []int{0, 3} {
		require.NoError(t, w.WriteBatchOnce(ctx, audit.BatchID{Spool: "legacy", Seq: 7, First: first}, []audit.Record{row, row}),
			"a replay of the batch version 3 wrote")
	}
	assert.Equal(t, int64(0), raw("SELECT COUNT(*) FROM toolmw_audit WHERE call_id = 'replayed'"), "writes nothing again")

	require.NoError(t, w.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, CallID: "new1", Tool: "search",
		Outcome: audit.OutcomeOK, RequestBytes: 123, ResponseBytes: 45678, ContentBlocks: 3}}), "the upgraded table takes a new row")
	got, err = w.Query(ctx, sqlstore.Query{})
	require.NoError(t, err, "query the upgraded table")
	require.Equal(t, []string{"new1", "old1"}, callIDs(got), "the new row and the old one")
	assert.Equal(t, [3]int{123, 45678, 3}, [3]int{got[0].RequestBytes, got[0].ResponseBytes, got[0].ContentBlocks}, "the new row's sizes")
	assert.Equal(t, [3]int{}, [3]int{got[1].RequestBytes, got[1].ResponseBytes, got[1].ContentBlocks}, "the old row reads zero sizes")
	assert.Equal(t, "written by v2", got[1].Message, "the old row is unchanged")

	again, err := open(sqlstore.Config{})
	require.NoError(t, err, "opening the upgraded table again")
	require.NoError(t, again.Close())
	assert.Equal(t, int64(4), raw("SELECT COUNT(*) FROM toolmw_audit_schema"), "versions 1 to 4, once each")
}

func TestSQLiteMigratesVersion3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	defer db.Close()
	for _, q := range sqliteV3DDL {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	ctx := context.Background()
	checkMigrationV4(t, func(o sqlstore.Config) (*sqlstore.Store, error) { return sqlstore.OpenSQLite(ctx, path, o) },
		func(q string) int64 {
			var v int64
			require.NoError(t, db.QueryRow(q).Scan(&v), q)
			return v
		})
}

func TestPostgresMigratesVersion3(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	schema := uniqueTable()
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	defer c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	_, err = c.Exec(ctx, "SET search_path TO "+schema)
	require.NoError(t, err)
	for _, q := range postgresV3DDL {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	sdsn := dsn + "&search_path=" + schema
	checkMigrationV4(t, func(o sqlstore.Config) (*sqlstore.Store, error) { return sqlstore.OpenPostgres(ctx, sdsn, o) },
		func(q string) int64 {
			var v int64
			require.NoError(t, c.QueryRow(ctx, q).Scan(&v), q)
			return v
		})
	var pk string
	require.NoError(t, c.QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'toolmw_audit_batches'::regclass AND contype = 'p'`).Scan(&pk))
	assert.Equal(t, "PRIMARY KEY (spool, seq, first_row)", pk, "the ledger's key names the part")
}

// TestLedgerWritesEachRowOnce: a batch written in parts (as Async writes a
// batch in which the store refused a row) and then whole, or whole after
// a part, has each of its rows once, on both stores.
func TestLedgerWritesEachRowOnce(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s, raw := b.open(t)
			ctx := context.Background()
			batch := make([]audit.Record, 10)
			for i := range batch {
				batch[i] = audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: "r" + string(rune('a'+i)), Tool: "t", Outcome: audit.OutcomeOK}
			}
			id := audit.BatchID{Spool: "s1", Seq: 1}
			part := func(lo, hi int) {
				p := id
				p.First = lo
				require.NoError(t, s.WriteBatchOnce(ctx, p, batch[lo:hi]), "part [%d, %d)", lo, hi)
			}
			part(0, 5)
			part(7, 8)
			part(0, 5) // again: nothing
			part(0, 10)
			part(5, 10)
			assert.Equal(t, int64(10), raw(t, "SELECT COUNT(*) FROM "+s.Table()), "ten rows")
			assert.Equal(t, int64(10), raw(t, "SELECT COUNT(DISTINCT call_id) FROM "+s.Table()), "each once")
			require.NoError(t, s.ForgetBatches(ctx, "s1", 2), "forget")
			assert.Equal(t, int64(0), raw(t, "SELECT COUNT(*) FROM "+s.Table()+"_batches WHERE spool = 's1'"), "every part is forgotten")
		})
	}
}
