package sqlstore_test

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
)

// hostile are strings that would break out of a badly quoted SQL literal,
// or that a driver could mangle on the way in or out.
var hostile = []string{
	"",
	"'",
	"''",
	`'); DROP TABLE toolmw_audit; --`,
	`x'); DELETE FROM toolmw_audit_schema; SELECT ('`,
	`"; DROP TABLE x; --`,
	"\\'; --",
	"a\x00b",
	"\x00",
	"trailing NUL\x00",
	"\xff\xfe invalid UTF-8 \xc3\x28",
	"\xed\xa0\x80 surrogate half",
	"emoji 😀👩‍👩‍👧 and 日本語",
	"line\nbreak\r\nand\ttab",
	"/* comment */ -- dash",
	"?, ?, ?1, :name, @x, $1",
	"X'00'",
	"CAST(X'41' AS TEXT)",
	strings.Repeat("long ' value ", 100_000),
	strings.Repeat("\x00\xff'", 50_000),
}

// hostileRows is one row per hostile string, in every text column.
func hostileRows() []audit.Record {
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var rows []audit.Record
	for i, h := range hostile {
		rows = append(rows, audit.Record{
			Time: base.Add(time.Duration(i) * time.Second), Kind: audit.KindTool,
			CallID: "call-" + string(rune('a'+i)), RequestID: h, SessionID: h, Transport: h, Tool: h, Subject: h,
			Outcome: audit.OutcomeError, Code: errs.Code(h), Message: h, Duration: time.Duration(i),
			Method: h, Path: h, Status: i,
			ClientMeta: map[string]any{"k": h, h: "v"},
			Detail:     map[string]any{"field": h},
			Arguments:  json.RawMessage(h),
		})
	}
	return rows
}

func TestSQLiteHostileRoundTrip(t *testing.T) {
	s, _ := sqliteBackend().open(t)
	ctx := context.Background()
	rows := hostileRows()
	require.NoError(t, s.WriteBatch(ctx, rows))

	got, err := s.Query(ctx, sqlstore.Query{Limit: 1000})
	require.NoError(t, err)
	require.Len(t, got, len(rows), "no row lost, none added")
	for i, g := range got {
		want := rows[len(rows)-1-i]
		h := hostile[len(rows)-1-i]
		assert.Equal(t, want.CallID, g.CallID)
		for name, v := range map[string]string{"request_id": g.RequestID, "session_id": g.SessionID, "transport": g.Transport,
			"tool": g.Tool, "subject": g.Subject, "code": string(g.Code), "message": g.Message, "method": g.Method, "path": g.Path} {
			assert.True(t, v == h, "%s of row %d: got %d bytes %.40q, want %d bytes %.40q", name, i, len(v), v, len(h), h)
		}
		assert.Equal(t, want.Status, g.Status)
		assert.Equal(t, want.Duration, g.Duration)
		if utf8.ValidString(h) {
			// JSON keeps valid UTF-8 exactly (invalid bytes become U+FFFD).
			assert.Equal(t, want.ClientMeta, g.ClientMeta)
			assert.Equal(t, want.Detail, g.Detail)
		}
	}

	// The values are stored as TEXT, so a query bound with the same string
	// finds them, whatever bytes they hold.
	for _, h := range hostile {
		if h == "" {
			continue
		}
		got, err := s.Query(ctx, sqlstore.Query{Tool: h})
		require.NoError(t, err)
		require.Len(t, got, 1, "tool = %.40q", h)
		assert.True(t, got[0].Tool == h)
	}
	n, err := s.Count(ctx, sqlstore.Query{})
	require.NoError(t, err)
	assert.Equal(t, int64(len(rows)), n, "the table is still there, with exactly these rows")
}

func TestSQLiteIntegerEdges(t *testing.T) {
	s, _ := sqliteBackend().open(t)
	ctx := context.Background()
	rows := []audit.Record{
		{Time: time.Unix(0, math.MaxInt64), Kind: audit.KindTool, CallID: "max", Outcome: audit.OutcomeOK, Duration: math.MaxInt64, Status: math.MaxInt32},
		{Time: time.Unix(0, math.MinInt64), Kind: audit.KindTool, CallID: "min", Outcome: audit.OutcomeOK, Duration: math.MinInt64, Status: math.MinInt32},
		{Kind: audit.KindTool, CallID: "zero", Outcome: audit.OutcomeOK},
	}
	require.NoError(t, s.WriteBatch(ctx, rows))
	for _, want := range rows {
		got, err := s.Query(ctx, sqlstore.Query{CallID: want.CallID})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, want.Time.UnixNano(), got[0].Time.UnixNano(), want.CallID)
		assert.Equal(t, want.Duration, got[0].Duration, want.CallID)
		assert.Equal(t, want.Status, got[0].Status, want.CallID)
	}
}

// TestSQLiteChunkSizes writes batches that are not a multiple of the
// statement size: every row arrives once, in order.
func TestSQLiteChunkSizes(t *testing.T) {
	for _, chunk := range []int{1, 3, 8} {
		old := sqlstore.SetSQLiteChunk(chunk)
		s, raw := sqliteBackend().open(t)
		ctx := context.Background()
		total := 0
		for _, n := range []int{1, 2, 7, 17, 100} {
			require.NoError(t, s.WriteBatch(ctx, benchRows(n)))
			total += n
		}
		sqlstore.SetSQLiteChunk(old)
		assert.Equal(t, int64(total), raw(t, "SELECT COUNT(*) FROM "+s.Table()), "chunk %d", chunk)
		assert.Equal(t, int64(total), raw(t, "SELECT COUNT(*) FROM "+s.Table()+" WHERE call_id LIKE 'call-%' AND typeof(call_id) = 'text'"))
	}
}

// TestSQLiteCancelledBatchWritesNothing: a batch whose context ends is
// rolled back whole, so that the writer can retry it.
func TestSQLiteCancelledBatchWritesNothing(t *testing.T) {
	s, raw := sqliteBackend().open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.WriteBatch(ctx, benchRows(50))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, raw(t, "SELECT COUNT(*) FROM "+s.Table()))
	require.NoError(t, s.WriteBatch(context.Background(), benchRows(50)))
	assert.Equal(t, int64(50), raw(t, "SELECT COUNT(*) FROM "+s.Table()))
}

func TestSQLiteClosedStore(t *testing.T) {
	s, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "a.db"), sqlstore.Config{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Error(t, s.WriteBatch(context.Background(), benchRows(3)))
}

func TestSQLiteMemoryWriteThenQuery(t *testing.T) {
	// One connection only: the writer must give it back after each batch.
	s, err := sqlstore.OpenSQLite(context.Background(), ":memory:", sqlstore.Config{})
	require.NoError(t, err)
	defer s.Close()
	for i := 0; i < 3; i++ {
		require.NoError(t, s.WriteBatch(context.Background(), benchRows(10)))
		n, err := s.Count(context.Background(), sqlstore.Query{})
		require.NoError(t, err)
		assert.Equal(t, int64(10*(i+1)), n)
	}
}

// FuzzSQLiteText: any string written as any text column reads back as the
// same bytes, and the batch never fails.
func FuzzSQLiteText(f *testing.F) {
	for _, h := range hostile {
		if len(h) < 1000 {
			f.Add(h)
		}
	}
	s, _ := sqliteBackend().open(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, v string) {
		id := "fuzz-" + time.Now().Format(time.RFC3339Nano)
		r := audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: id, Tool: v, Subject: v, Outcome: audit.OutcomeError,
			Code: errs.Code(v), Message: v, Path: v, ClientMeta: map[string]any{v: v}}
		require.NoError(t, s.WriteBatch(ctx, []audit.Record{r, r}))
		got, err := s.Query(ctx, sqlstore.Query{CallID: id})
		require.NoError(t, err)
		require.Len(t, got, 2)
		for _, g := range got {
			for _, x := range []string{g.Tool, g.Subject, string(g.Code), g.Message, g.Path} {
				if x != v {
					t.Fatalf("wrote %q, read %q", v, x)
				}
			}
		}
	})
}

// TestPostgresHostileRowsDoNotFailTheBatch: PostgreSQL refuses NUL bytes,
// invalid UTF-8, \u0000 in jsonb and over-long index entries; the writer
// makes such values storable so that one hostile row does not send its whole
// batch to the fallback.
func TestPostgresHostileRowsDoNotFailTheBatch(t *testing.T) {
	s, _ := pgBackend().open(t)
	ctx := context.Background()
	rows := hostileRows()
	require.NoError(t, s.WriteBatch(ctx, rows), "a batch with hostile text is written, not refused")

	got, err := s.Query(ctx, sqlstore.Query{Limit: 1000})
	require.NoError(t, err)
	require.Len(t, got, len(rows), "no row lost, none added")
	for i, g := range got {
		h := hostile[len(rows)-1-i]
		if utf8.ValidString(h) && !strings.ContainsRune(h, 0) {
			assert.True(t, g.Message == h, "valid text is stored exactly (row %d)", i)
			if len(h) <= 1024 {
				assert.True(t, g.Tool == h, "a tool name within the bound is stored exactly (row %d)", i)
			}
		} else {
			assert.True(t, utf8.ValidString(g.Message) && !strings.ContainsRune(g.Message, 0),
				"unstorable bytes become U+FFFD (row %d): %.40q", i, g.Message)
		}
		assert.LessOrEqual(t, len(g.Tool), 1024, "the indexed tool column is bounded (row %d)", i)
	}
}
