package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
)

// BenchmarkQueryPostgres reads the newest rows of a large shared log: a
// table of TOOLMW_BENCH_QUERY_ROWS rows (default 2,000,000) over the last
// 30 days, in time order as a fleet writes them, 1% failures.
//
//	TOOLMW_TEST_POSTGRES_DSN=... go test ./audit/sqlstore -run '^$' -bench QueryPostgres -benchtime 10x
//
// Measured (2026-12-01, 2 cores, PostgreSQL 15), ms per query, one query
// over the whole table before → the last hour and day first: newest 610 →
// 5; newest-errors 230 → 11; call-id-recent 191 → 1.1; call-id-missing 195
// → 201 (the slices found nothing, then the whole table); newest-tool and
// last-hour (an index already) 1–2 and 7–8, unchanged. Since the btree on
// call_id (schema 2; collation "C" since 3), a call id is found, or known
// missing, from the index: call-id-recent 0.28 ms, call-id-missing 0.20 ms
// (2026-12-01, load 3-4.5; newest 5.0 ms in the same run).
func BenchmarkQueryPostgres(b *testing.B) {
	dsn := pgDSN(b)
	n := 2_000_000
	if v := os.Getenv("TOOLMW_BENCH_QUERY_ROWS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err, "TOOLMW_BENCH_QUERY_ROWS")
	}
	ctx := context.Background()
	table := uniqueTable()
	s, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: table})
	require.NoError(b, err, "open")
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(b, err, "connect")
	b.Cleanup(func() {
		_ = s.Close()
		_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
		_ = c.Close(ctx)
	})
	// Rows spread evenly over the 30 days before now, oldest first.
	_, err = c.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (ts, kind, call_id, tool, outcome, code, message, duration_ns)
		SELECT now() - interval '30 days' + (i * (interval '30 days' / %d)), 'tool', 'c-' || i,
			'tool' || (i %% 20), CASE WHEN i %% 100 = 0 THEN 'error' ELSE 'ok' END,
			CASE WHEN i %% 100 = 0 THEN 'internal' ELSE '' END,
			CASE WHEN i %% 100 = 0 THEN 'dial tcp: connection refused' ELSE '' END, 1000
		FROM generate_series(1, %d) AS i`, table, n, n))
	require.NoError(b, err, "fill")
	_, err = c.Exec(ctx, "VACUUM ANALYZE "+table)
	require.NoError(b, err, "vacuum")
	for _, tc := range []struct {
		name string
		q    sqlstore.Query
	}{
		{"newest", sqlstore.Query{}},
		{"newest-errors", sqlstore.Query{Outcome: audit.OutcomeError}},
		{"newest-tool", sqlstore.Query{Tool: "tool7"}},
		{"last-hour", sqlstore.Query{Since: time.Now().Add(-time.Hour), Limit: 1000}},
		{"call-id-recent", sqlstore.Query{CallID: fmt.Sprintf("c-%d", n-10)}},
		{"call-id-missing", sqlstore.Query{CallID: "no-such-call"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				rows, err := s.Query(ctx, tc.q)
				if err != nil {
					b.Fatal(err)
				}
				if want := tc.q.CallID != "no-such-call"; want != (len(rows) > 0) {
					b.Fatalf("%d rows", len(rows))
				}
			}
		})
	}
}
