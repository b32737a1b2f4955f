package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit/sqlstore"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// uniqueTable names a table no other run uses.
func uniqueTable() string {
	return fmt.Sprintf("audit_t%d_%d", time.Now().UnixNano(), rand.IntN(1_000_000))
}

func pgDSN(t testing.TB) string {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	return dsn
}

// backend opens a fresh store and gives a way to run raw SQL on it.
type backend struct {
	name string
	open func(t testing.TB) (*sqlstore.Store, rawDB)
}

// rawDB runs a query returning one int64.
type rawDB func(t testing.TB, query string) int64

func sqliteBackend() backend {
	return backend{name: "sqlite", open: func(t testing.TB) (*sqlstore.Store, rawDB) {
		path := filepath.Join(t.TempDir(), "audit.db")
		s, err := sqlstore.OpenSQLite(context.Background(), path, sqlstore.Config{Table: uniqueTable()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s, func(t testing.TB, q string) int64 {
			db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
			require.NoError(t, err)
			defer db.Close()
			var n int64
			require.NoError(t, db.QueryRow(q).Scan(&n))
			return n
		}
	}}
}

func pgBackend() backend {
	return backend{name: "postgres", open: func(t testing.TB) (*sqlstore.Store, rawDB) {
		dsn := pgDSN(t)
		table := uniqueTable()
		s, err := sqlstore.OpenPostgres(context.Background(), dsn, sqlstore.Config{Table: table})
		require.NoError(t, err)
		raw := func(t testing.TB, q string) int64 {
			ctx := context.Background()
			c, err := pgx.Connect(ctx, dsn)
			require.NoError(t, err)
			defer c.Close(ctx)
			var n int64
			require.NoError(t, c.QueryRow(ctx, q).Scan(&n))
			return n
		}
		t.Cleanup(func() {
			_ = s.Close()
			ctx := context.Background()
			if c, err := pgx.Connect(ctx, dsn); err == nil {
				_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
				_ = c.Close(ctx)
			}
		})
		return s, raw
	}}
}

func backends() []backend { return []backend{sqliteBackend(), pgBackend()} }
