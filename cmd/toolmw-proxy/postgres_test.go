package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
)

// TestAuditPostgres: with audit.postgres_env the rows go to PostgreSQL, and
// the DSN, which is in the proxy's environment, is not in the upstream's.
func TestAuditPostgres(t *testing.T) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TOOLMW_TEST_POSTGRES_DSN is not set (.ci/run starts PostgreSQL and sets it)")
	}
	table := fmt.Sprintf("proxy_audit_%d", time.Now().UnixNano())
	t.Setenv("TOOLMW_PROXY_TEST_AUDIT_DSN", dsn)
	p := startLeaky(t, "audit:\n  postgres_env: TOOLMW_PROXY_TEST_AUDIT_DSN\n  table: "+table+"\n  spool: "+t.TempDir()+"/spool\n")
	assert.NotContains(t, text(p.call(t, "env", nil)), dsn, "the DSN stays with the proxy")
	p.call(t, "raw_error", nil)

	ctx := context.Background()
	store, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.Config{Table: table, ReadOnly: true})
	require.NoError(t, err)
	defer store.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		rows, err := store.Query(ctx, sqlstore.Query{Kind: audit.KindTool, Tool: "raw_error"})
		require.NoError(t, err)
		if len(rows) > 0 {
			assert.Contains(t, rows[0].Message, canary, "the row holds the upstream's raw text")
			return
		}
		require.True(t, time.Now().Before(deadline), "no row of raw_error in PostgreSQL within a minute")
		time.Sleep(50 * time.Millisecond)
	}
}
