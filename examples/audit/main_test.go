package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

var now = time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)

func fixture(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "audit.db")
	s, err := sqlstore.OpenSQLite(context.Background(), db, sqlstore.Config{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.WriteBatch(context.Background(), []audit.Record{
		{Time: now.Add(-3 * time.Hour), Kind: audit.KindTool, CallID: "c1", Tool: "greet", Outcome: audit.OutcomeOK, Duration: time.Millisecond},
		{Time: now.Add(-2 * time.Hour), Kind: audit.KindTool, CallID: "c2", Tool: "sales_report", Outcome: audit.OutcomeError,
			Code: errs.CodeInternal, Message: "dial postgres://u:pw@db:5432/x: connection refused", Duration: 2 * time.Millisecond},
		{Time: now.Add(-time.Hour), Kind: audit.KindTool, CallID: "c3", Tool: "lookup_order", Outcome: audit.OutcomeError,
			Code: errs.CodeNotFound, Message: "order 42 does not exist", Detail: map[string]any{"id": 42.0}},
		{Time: now.Add(-time.Minute), Kind: audit.KindHTTP, RequestID: "r1", Method: "POST", Path: "/mcp", Status: 200, Outcome: audit.OutcomeOK},
	}))
	return db
}

func runAudit(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func() time.Time { return now })
	return out.String(), errb.String(), code
}

func TestTable(t *testing.T) {
	db := fixture(t)
	out, _, code := runAudit(t, "-db", db)
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, "header and the three tool rows:\n%s", out)
	assert.Regexp(t, `^TIME\s+TOOL\s+OUTCOME\s+CODE\s+DURATION\s+CALL\s+MESSAGE$`, lines[0])
	assert.Contains(t, lines[1], "lookup_order", "newest first")
	assert.Contains(t, lines[1], `order 42 does not exist {"id":42}`)
	assert.Contains(t, lines[2], "dial postgres://u:pw@db:5432/x")
	// Aligned: the OUTCOME column starts at the same offset on every line.
	col := strings.Index(lines[0], "OUTCOME")
	for _, l := range lines[1:] {
		assert.NotEqual(t, " ", l[col:col+1], "column aligned: %q", l)
		assert.Equal(t, " ", l[col-1:col], "column aligned: %q", l)
	}

	out, _, _ = runAudit(t, "-db", db, "-kind", "all")
	assert.Contains(t, out, "POST /mcp 200")
}

func TestFilters(t *testing.T) {
	db := fixture(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-tool", "greet"}, []string{"c1"}},
		{[]string{"-outcome", "error"}, []string{"c3", "c2"}},
		{[]string{"-code", "internal"}, []string{"c2"}},
		{[]string{"-since", "90m"}, []string{"c3"}},
		{[]string{"-since", now.Add(-150 * time.Minute).Format(time.RFC3339)}, []string{"c3", "c2"}},
		{[]string{"-limit", "1"}, []string{"c3"}},
		{[]string{"-kind", "http"}, []string{""}},
	} {
		out, errOut, code := runAudit(t, append([]string{"-db", db, "-json"}, tc.args...)...)
		require.Equal(t, 0, code, errOut)
		var rows []Row
		require.NoError(t, json.Unmarshal([]byte(out), &rows))
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.CallID)
		}
		assert.Equal(t, tc.want, ids, "%v", tc.args)
	}
}

func TestErrors(t *testing.T) {
	db := fixture(t)
	for _, args := range [][]string{
		{"-db", filepath.Join(t.TempDir(), "missing.db")},
		{"-db", db, "-outcome", "exploded"},
		{"-db", db, "-code", "oops"},
		{"-db", db, "-since", "yesterday"},
		{"-db", db, "-limit", "0"},
		{"-db", db, "-kind", "rpc"},
		{"-nope"},
	} {
		out, errOut, code := runAudit(t, args...)
		assert.NotEqual(t, 0, code, "%v", args)
		assert.Empty(t, out)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		assert.True(t, strings.HasPrefix(errOut, "audit: "), errOut)
	}
}

// TestReadsOnly: the reader opens the database read-only: it works on a
// read-only file (and with "?mode=ro"), changes no byte and creates no
// file, and says "not a toolmw audit database" for a 0-byte file, an
// unrelated SQLite file, a text file and a table that is not there,
// leaving them as they were.
func TestReadsOnly(t *testing.T) {
	db := fixture(t)
	require.NoError(t, os.Chmod(db, 0o444))
	before := dirState(t, filepath.Dir(db))
	for _, args := range [][]string{{"-db", db}, {"-db", db + "?mode=ro"}, {"-db", db, "-kind", "all", "-json"}} {
		out, errOut, code := runAudit(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		assert.Contains(t, out, "lookup_order", "%v reads the rows", args)
	}
	assert.Equal(t, before, dirState(t, filepath.Dir(db)), "no file created or changed")

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	other := filepath.Join(dir, "other.db")
	odb, err := sql.Open("sqlite", "file:"+other)
	require.NoError(t, err)
	_, err = odb.Exec("CREATE TABLE notes (body TEXT)")
	require.NoError(t, err)
	require.NoError(t, odb.Close())
	text := filepath.Join(dir, "text.db")
	require.NoError(t, os.WriteFile(text, []byte(strings.Repeat("not sqlite ", 500)), 0o600))
	before = dirState(t, dir)
	for _, args := range [][]string{{"-db", empty}, {"-db", other}, {"-db", text}, {"-db", db, "-table", "nosuch"}} {
		out, errOut, code := runAudit(t, args...)
		assert.Equal(t, 1, code, "%v", args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "not a toolmw audit database", "%v", args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	}
	assert.Equal(t, before, dirState(t, dir), "the files are as they were: no table created, no WAL")
}

// dirState lists a directory's files with their sizes and contents' hashes.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = fmt.Sprintf("%d:%x", len(b), sha256.Sum256(b))
	}
	return out
}

// TestNotesAndTrace: the table shows a row's notes and trace id (in
// columns that appear when a row has them), and -json has them with the
// span id.
func TestNotesAndTrace(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	s, err := sqlstore.OpenSQLite(context.Background(), db, sqlstore.Config{})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), []audit.Record{
		{Time: now.Add(-time.Hour), Kind: audit.KindTool, CallID: "c1", Tool: "greet", Outcome: audit.OutcomeOK},
		{Time: now.Add(-time.Minute), Kind: audit.KindTool, CallID: "c2", Tool: "search", Outcome: audit.OutcomeOK,
			Notes:   []toolctx.Note{{Key: "attempts", Value: "2"}, {Key: "cache", Value: "miss"}},
			TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331"},
	}))
	require.NoError(t, s.Close())
	out, errOut, code := runAudit(t, "-db", db)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, "header and two rows:\n%s", out)
	assert.Regexp(t, `^TIME\s+TOOL\s+OUTCOME\s+CODE\s+DURATION\s+CALL\s+TRACE\s+NOTES\s+MESSAGE$`, lines[0], "the header")
	assert.Regexp(t, `c2\s+0af7651916cd43dd8448eb211c80319c\s+attempts=2 cache=miss`, lines[1], "the row's trace id and notes")
	assert.Regexp(t, `c1\s+-\s+-`, lines[2], "a row without them")

	out, errOut, code = runAudit(t, "-db", db, "-json", "-limit", "1")
	require.Equal(t, 0, code, errOut)
	var rows []Row
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, []Note{{Key: "attempts", Value: "2"}, {Key: "cache", Value: "miss"}}, rows[0].Notes, "-json notes")
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", rows[0].TraceID, "-json trace_id")
	assert.Equal(t, "b7ad6b7169203331", rows[0].SpanID, "-json span_id")
	assert.Contains(t, out, `"notes": [`, "the JSON names the field notes")
}

// TestSizes: the table shows a row's request and response bytes and its
// content blocks (in columns that appear when a row has them), and -json
// has them.
func TestSizes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	s, err := sqlstore.OpenSQLite(context.Background(), db, sqlstore.Config{})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), []audit.Record{
		{Time: now.Add(-time.Minute), Kind: audit.KindTool, CallID: "c1", Tool: "search", Outcome: audit.OutcomeOK,
			RequestBytes: 17, ResponseBytes: 4096, ContentBlocks: 2},
	}))
	require.NoError(t, s.Close())
	out, errOut, code := runAudit(t, "-db", db)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, "header and a row:\n%s", out)
	assert.Regexp(t, `^TIME\s+TOOL\s+OUTCOME\s+CODE\s+DURATION\s+CALL\s+IN_B\s+OUT_B\s+BLOCKS\s+MESSAGE$`, lines[0], "the header")
	assert.Regexp(t, `c1\s+17\s+4096\s+2`, lines[1], "the row's sizes")

	out, errOut, code = runAudit(t, "-db", db, "-json")
	require.Equal(t, 0, code, errOut)
	var rows []Row
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, [3]int{17, 4096, 2}, [3]int{rows[0].RequestBytes, rows[0].ResponseBytes, rows[0].ContentBlocks}, "-json sizes")
}

// TestReadsAnOlderSchema: a database written by the previous toolmw
// (schema version 2, without the notes and trace columns) is read as it
// is, and not upgraded or changed by the reader.
func TestReadsAnOlderSchema(t *testing.T) {
	db := filepath.Join(t.TempDir(), "v2.db")
	odb, err := sql.Open("sqlite", "file:"+db)
	require.NoError(t, err)
	for _, q := range []string{
		`CREATE TABLE toolmw_audit_schema (version INTEGER NOT NULL)`,
		`INSERT INTO toolmw_audit_schema (version) VALUES (1), (2)`,
		`CREATE TABLE toolmw_audit (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, kind TEXT NOT NULL,
			call_id TEXT NOT NULL DEFAULT '', request_id TEXT NOT NULL DEFAULT '', session_id TEXT NOT NULL DEFAULT '',
			transport TEXT NOT NULL DEFAULT '', tool TEXT NOT NULL DEFAULT '', subject TEXT NOT NULL DEFAULT '',
			outcome TEXT NOT NULL, code TEXT NOT NULL DEFAULT '', message TEXT NOT NULL DEFAULT '', detail TEXT,
			duration_ns INTEGER NOT NULL, client_meta TEXT, arguments TEXT, method TEXT NOT NULL DEFAULT '',
			path TEXT NOT NULL DEFAULT '', status INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE toolmw_audit_batches (spool TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (spool, seq)) WITHOUT ROWID`,
		fmt.Sprintf(`INSERT INTO toolmw_audit (ts, kind, call_id, tool, outcome, code, message, duration_ns)
			VALUES (%d, 'tool', 'old1', 'sales_report', 'error', 'internal', 'written by v2', 1000)`, now.Add(-time.Hour).UnixNano()),
	} {
		_, err := odb.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, odb.Close())
	before := dirState(t, filepath.Dir(db))
	out, errOut, code := runAudit(t, "-db", db)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "written by v2", "the old row")
	assert.NotContains(t, out, "NOTES", "no notes column for rows without notes")
	assert.Equal(t, before, dirState(t, filepath.Dir(db)), "the old database is not upgraded or changed")
}

// TestOutcomeInputRequired: -outcome takes every outcome a row can have,
// input_required (a multi-round-trip call's round that asked the client for
// input) among them, finds its rows, and lists it in the flag's help and in
// the error for an outcome that is not one.
func TestOutcomeInputRequired(t *testing.T) {
	db := filepath.Join(t.TempDir(), "audit.db")
	s, err := sqlstore.OpenSQLite(context.Background(), db, sqlstore.Config{})
	require.NoError(t, err)
	require.NoError(t, s.WriteBatch(context.Background(), []audit.Record{
		{Time: now.Add(-2 * time.Minute), Kind: audit.KindTool, CallID: "m1", Tool: "book_trip", Outcome: audit.OutcomeInputRequired},
		{Time: now.Add(-time.Minute), Kind: audit.KindTool, CallID: "m2", Tool: "book_trip", Outcome: audit.OutcomeOK},
	}))
	require.NoError(t, s.Close())

	for _, o := range audit.Outcomes() {
		out, errOut, code := runAudit(t, "-db", db, "-json", "-outcome", string(o))
		require.Equal(t, 0, code, "-outcome %s: %s", o, errOut)
		var rows []Row
		require.NoError(t, json.Unmarshal([]byte(out), &rows), "-outcome %s", o)
		for _, r := range rows {
			assert.Equal(t, o, r.Outcome, "-outcome %s finds only its rows", o)
		}
	}
	out, errOut, code := runAudit(t, "-db", db, "-json", "-outcome", "input_required")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"call_id": "m1"`, "the round that asked for input")
	assert.NotContains(t, out, `"call_id": "m2"`)

	_, errOut, _ = runAudit(t, "-db", db, "-outcome", "asked")
	assert.Contains(t, errOut, "input_required", "the error lists every outcome: %s", errOut)
	_, help, code := runAudit(t, "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, help, "ok, error, rejected, canceled, timeout, panic, input_required", "the help lists every outcome")
}
