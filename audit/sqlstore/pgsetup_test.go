package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
)

// TestPostgresSetUpConnectionIsNotKept: the connection OpenPostgres sets
// the table up on, which writes (and rolls back) the probe row, is closed
// instead of given back to the pool, so that the writer's COPY is the
// first insert into the table on every backend it writes on (see
// setUpPostgres: on a backend that inserted first, each COPY gives its
// slots' memory back and faults it in again). The first connection the
// pool opens after has not opened the table's indexes, as the set-up one
// had.
func TestPostgresSetUpConnectionIsNotKept(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	table := uniqueTable()
	s, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: table})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = s.Close()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
			_ = c.Close(ctx)
		}
	})
	require.Zero(t, sqlstore.PostgresConns(s), "the pool kept the connection that set the table up and wrote the probe row")
	// pg_backend_memory_contexts lists, among this backend's memory, one
	// "index info" context per index whose relcache entry it built,
	// named after the index (superusers and pg_read_all_stats only).
	n, err := sqlstore.PostgresQueryInt(ctx, s, "SELECT count(*) FROM pg_backend_memory_contexts WHERE name = 'index info' AND ident LIKE $1", table+"%")
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		t.Log("pg_backend_memory_contexts is not readable by this user: only the pool was checked")
	} else {
		require.NoError(t, err)
		assert.Zero(t, n, "the writer's connection has opened the table's indexes before its first COPY")
	}
	require.NoError(t, s.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, CallID: "c1", Tool: "t", Outcome: audit.OutcomeOK}}))
	got, err := s.Query(ctx, sqlstore.Query{CallID: "c1"})
	require.NoError(t, err)
	require.Len(t, got, 1)
}
