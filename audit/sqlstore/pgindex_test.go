package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

// TestPostgresCallIDLookupUsesTheIndex: the query Store.Query runs for a
// call id is answered from the index on call_id, whatever the call's age
// (without it, PostgreSQL reads the whole table), and call_id and tool
// compare bytes (collation "C"), which keeps their indexes cheap to
// maintain.
func TestPostgresCallIDLookupUsesTheIndex(t *testing.T) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	table := fmt.Sprintf("audit_idx%d_%d", time.Now().UnixNano(), rand.IntN(1_000_000))
	s, err := OpenPostgres(ctx, dsn, Config{Table: table})
	require.NoError(t, err, "open")
	defer func() {
		_, _ = s.pool.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
		_ = s.Close()
	}()
	rows := make([]audit.Record, 20000)
	old := time.Now().Add(-90 * 24 * time.Hour)
	for i := range rows {
		rows[i] = audit.Record{Time: old.Add(time.Duration(i) * time.Minute), Kind: audit.KindTool, CallID: "0123456789ab-" + strconv.Itoa(i),
			Tool: "search", Outcome: audit.OutcomeOK}
	}
	require.NoError(t, s.WriteBatch(ctx, rows), "write")
	_, err = s.pool.Exec(ctx, "ANALYZE "+table)
	require.NoError(t, err, "analyze")

	for _, col := range []string{"call_id", "tool"} {
		var collation string
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT COALESCE(collation_name, '') FROM information_schema.columns
			WHERE table_name = $1 AND column_name = $2`, table, col).Scan(&collation), "collation")
		assert.Equal(t, "C", collation, "%s compares bytes", col)
	}

	where, args := Query{CallID: "0123456789ab-7"}.where(func(n int) string { return fmt.Sprintf("$%d", n) }, func(t time.Time) any { return t })
	prows, err := s.pool.Query(ctx, "EXPLAIN SELECT "+s.selectColumnsPG()+" FROM "+table+where+" ORDER BY ts DESC, id DESC LIMIT 100", args...)
	require.NoError(t, err, "explain")
	var plan []string
	for prows.Next() {
		var line string
		require.NoError(t, prows.Scan(&line))
		plan = append(plan, line)
	}
	require.NoError(t, prows.Err())
	joined := strings.Join(plan, "\n")
	assert.Contains(t, joined, "Index Scan using "+table+"_call_id", "the lookup uses the call_id index:\n%s", joined)
	assert.NotContains(t, joined, "Seq Scan", "and reads no table:\n%s", joined)

	got, err := s.Query(ctx, Query{CallID: "0123456789ab-7"})
	require.NoError(t, err, "query")
	require.Len(t, got, 1, "the 90-day-old call is found")
}
