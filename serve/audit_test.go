package serve

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestAuditFlags: the flags set their fields, -audit-durability takes
// memory and disk only, and -audit-db defaults to DefaultSQLite.
func TestAuditFlags(t *testing.T) {
	var c AuditConfig
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	AddAuditFlags(fs, &c)
	require.NoError(t, fs.Parse([]string{"-audit-postgres", "postgres://x", "-audit-table", "t1", "-audit-spool", "sp",
		"-audit-durability", "disk", "-otlp-logs-endpoint", "http://127.0.0.1:4318"}))
	assert.Equal(t, AuditConfig{SQLite: DefaultSQLite, Postgres: "postgres://x", Table: "t1", Spool: "sp",
		Durability: audit.DurabilityDisk, OTLPLogs: "http://127.0.0.1:4318"}, c)
	assert.Equal(t, "disk", fs.Lookup("audit-durability").Value.String())

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	AddAuditFlags(fs, &AuditConfig{})
	err := fs.Parse([]string{"-audit-durability", "fsync"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `want memory or disk, not "fsync"`)
}

// TestCheck: the mistakes seen without a store, in the command's words.
func TestCheck(t *testing.T) {
	assert.EqualError(t, AuditConfig{}.Check(), "-audit-db must name a file (or pass -audit-postgres)")
	assert.EqualError(t, AuditConfig{Settings: AuditSettings{SQLite: "audit.sqlite"}}.Check(),
		"audit.sqlite must name a file (or pass -audit-postgres)")
	assert.EqualError(t, AuditConfig{SQLite: "a.db", OTLPLogs: "127.0.0.1:4318"}.Check(),
		`-otlp-logs-endpoint must be an http:// or https:// URL such as http://127.0.0.1:4318, not "127.0.0.1:4318"`)
	assert.EqualError(t, AuditConfig{SQLite: "a.db", Durability: 7}.Check(), "the audit durability 7 is neither memory nor disk")
	assert.NoError(t, AuditConfig{SQLite: "a.db"}.Check())
}

// TestOpenAuditHints: each startup error names the setting that applies,
// as AuditSettings calls it, and says its cause once.
func TestOpenAuditHints(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "a.db")
	const closed = "127.0.0.1:1" // nothing listens there in tests
	proxy := AuditSettings{SQLite: "-audit-db or audit.sqlite", Postgres: "-audit-postgres or audit.postgres_env",
		Table: "-audit-table or audit.table", Spool: "-audit-spool or audit.spool"}
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	for _, tc := range []struct {
		name string
		c    AuditConfig
		want string
	}{
		{"sqlite dir missing", AuditConfig{SQLite: missing, Settings: proxy},
			fmt.Sprintf("cannot open the audit database %q: sqlstore: sqlite %q: the directory %q does not exist (create the directory, or pass -audit-db or audit.sqlite with a file path in one that exists)",
				missing, missing, filepath.Dir(missing))},
		{"postgres unreachable", AuditConfig{Postgres: "postgres://u@" + closed + "/db?connect_timeout=2", Settings: proxy},
			"cannot open the PostgreSQL audit store: sqlstore: postgres: cannot connect to " + closed +
				": failed to connect to `user=u database=db`: " + closed + " (127.0.0.1): dial error: dial tcp " + closed +
				": connect: connection refused (fix -audit-postgres or audit.postgres_env)"},
		{"bad table", AuditConfig{SQLite: filepath.Join(dir, "t.db"), Table: "no such table!"},
			""}, // checked below: names -audit-table
		{"spool not a directory", AuditConfig{SQLite: filepath.Join(dir, "s.db"), Spool: notDir, Settings: proxy}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			al, err := OpenAudit(context.Background(), tc.c, discard)
			if err == nil {
				al.Close()
				t.Fatal("opened")
			}
			switch tc.name {
			case "bad table":
				assert.Contains(t, err.Error(), "(fix -audit-table, or pass -audit-db with another file)")
			case "spool not a directory":
				assert.Contains(t, err.Error(), "(pass -audit-spool or audit.spool with a writable directory)")
			default:
				assert.Equal(t, tc.want, err.Error())
			}
		})
	}
}

// TestOpenAuditDefaults: SQLite's spool is beside the database, and the
// log says where the store is.
func TestOpenAuditDefaults(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	al, err := OpenAudit(context.Background(), AuditConfig{SQLite: db, Durability: audit.DurabilityDisk}, discard)
	require.NoError(t, err)
	assert.Equal(t, "SQLite "+db, al.Where())
	assert.Equal(t, db, al.SQLitePath())
	al.Emitter().Emit(context.Background(), audit.Record{Tool: "t"})
	al.Close()
	st, err := os.Stat(db + ".spool")
	require.NoError(t, err)
	assert.True(t, st.IsDir())
}
