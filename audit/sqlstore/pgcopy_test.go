package sqlstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// copyRows are rows that reach every branch of the encoder: empty and
// full, text with NUL and invalid UTF-8, an over-long tool name, JSON that
// jsonb refuses as it is, notes, a zero time and times before 2000 and
// after, negative numbers and a content count past the integer column.
func copyRows(n int, seed uint64) []audit.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	texts := []string{"", "plain", "日本語 'q'", "a\x00b", "x\xffy", "\xc3\x28", strings.Repeat("long ", 300), "\u0000\u00e9"}
	pick := func() string { return texts[rng.IntN(len(texts))] }
	jsons := []json.RawMessage{nil, json.RawMessage(`{"q":"v"}`), json.RawMessage(`"\u0000"`), json.RawMessage("not json"),
		json.RawMessage(`["\ud800","\ud83d\ude00"]`), json.RawMessage("\"\xff\"")}
	times := []time.Time{{}, time.Date(1999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("x", 3600)), time.Unix(0, 1)}
	rows := make([]audit.Record, n)
	for i := range rows {
		r := audit.Record{Time: times[rng.IntN(len(times))].Add(time.Duration(rng.Int64N(1e12))), Kind: audit.Kind(pick()),
			CallID: pick(), RequestID: pick(), SessionID: pick(), Transport: pick(), Tool: pick(), Subject: pick(),
			Outcome: audit.RowOutcome(pick()), Code: errs.Code(pick()), Message: pick(), Duration: time.Duration(rng.Int64() - rng.Int64()),
			Arguments: jsons[rng.IntN(len(jsons))], Method: pick(), Path: pick(), Status: rng.IntN(600) - 50,
			TraceID: pick(), SpanID: pick(), RequestBytes: rng.Int() - rng.Int(), ResponseBytes: rng.IntN(1 << 40),
			ContentBlocks: rng.IntN(1<<33) - 1<<20}
		if rng.IntN(3) == 0 {
			r.Detail = map[string]any{"why": pick(), "n": rng.IntN(9)}
			r.ClientMeta = map[string]any{pick(): pick()}
			r.Notes = []toolctx.Note{{Key: pick(), Value: pick()}, {Key: "k", Value: pick()}}
		}
		if i%97 == 0 {
			r.Tool = strings.Repeat("é", 1000) // cut to maxPGTool
		}
		rows[i] = r
	}
	return rows
}

// pgxRow is what pgx.CopyFrom sends for r, given pgRows' values and the
// columns' types: the reference the binary encoder must match.
func pgxRow(t *testing.T, m *pgtype.Map, r audit.Record) []byte {
	t.Helper()
	src := &pgRows{batch: []audit.Record{r}}
	require.True(t, src.Next())
	vals, err := src.Values()
	require.NoError(t, err)
	oid := func(c string) uint32 {
		switch pgTypes[c] {
		case "timestamp with time zone":
			return pgtype.TimestamptzOID
		case "bigint":
			return pgtype.Int8OID
		case "integer":
			return pgtype.Int4OID
		case "jsonb":
			return pgtype.JSONBOID
		}
		return pgtype.TextOID
	}
	b := binary.BigEndian.AppendUint16(nil, uint16(len(columns)))
	for i, v := range vals {
		if v == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			continue
		}
		enc, err := m.Encode(oid(columns[i]), pgtype.BinaryFormatCode, v, nil)
		require.NoError(t, err, "column %s", columns[i])
		b = binary.BigEndian.AppendUint32(b, uint32(len(enc)))
		b = append(b, enc...)
	}
	return b
}

func TestPGCopyEncodesRowsAsPGXDoes(t *testing.T) {
	m := pgtype.NewMap()
	for i, r := range copyRows(2000, 7) {
		require.Equal(t, pgxRow(t, m, r), appendPGRow(nil, &r), "row %d: %+v", i, r)
	}
}

// TestPGCopyReadGivesTheStreamThroughAnyBuffer reads one batch's stream
// through buffers of many sizes, from the header's 19 bytes (smaller than
// most rows, which are then split) up: each gives the same bytes, which
// are the header, every row in order, and the trailer.
func TestPGCopyReadGivesTheStreamThroughAnyBuffer(t *testing.T) {
	rows := copyRows(300, 3)
	want := []byte(copyHeader)
	for i := range rows {
		want = appendPGRow(want, &rows[i])
	}
	want = append(want, 0xff, 0xff)
	for _, size := range []int{19, 20, 21, 64, 333, 4096, 65531, 1 << 20} {
		c := &pgCopy{batch: rows}
		var got []byte
		buf := make([]byte, size)
		for reads := 0; ; reads++ {
			require.Less(t, reads, len(want), "size %d: the stream ends", size)
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "size %d", size)
			require.Positive(t, n, "size %d: a read makes progress", size)
		}
		require.True(t, bytes.Equal(want, got), "size %d: the stream is the header, the rows and the trailer", size)
	}
	_, err := (&pgCopy{}).Read(make([]byte, 18))
	assert.ErrorIs(t, err, io.ErrShortBuffer, "a buffer too small for the header is refused, not overrun")
}

func TestPlainASCIIAgreesWithUTF8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0, 1, 'a', 0x7f, 0x80, 0xc3, 0xa9, 0xff}
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
			if rng.IntN(16) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		s := string(b)
		ascii := utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
		for _, c := range b {
			ascii = ascii && c < utf8.RuneSelf
		}
		require.Equal(t, ascii, plainASCII(s), "%q", s)
		if plainASCII(s) {
			require.Equal(t, s, pgText(s), "plain ASCII is stored as it is")
		}
	}
}

// TestPGCopyBinaryAndPGXStoreTheSameRows writes one batch through the
// binary COPY and through pgx.CopyFrom (the path a table with other column
// types takes), with and without the ledger's transaction: PostgreSQL holds
// the same values, column by column, in all four tables.
func TestPGCopyBinaryAndPGXStoreTheSameRows(t *testing.T) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	rows := copyRows(3000, 11)
	var dumps [][]string
	for _, binaryCopy := range []bool{true, false} {
		for _, once := range []bool{false, true} {
			table := fmt.Sprintf("audit_copy%d_%d", time.Now().UnixNano(), rand.IntN(1_000_000))
			s, err := OpenPostgres(ctx, dsn, Config{Table: table})
			require.NoError(t, err)
			t.Cleanup(func() {
				_, _ = s.pool.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
				_ = s.Close()
			})
			require.True(t, s.binaryCopy, "a table this package created takes the binary COPY")
			s.binaryCopy = binaryCopy
			if once {
				require.NoError(t, s.WriteBatchOnce(ctx, audit.BatchID{Spool: "s", Seq: 1}, rows))
			} else {
				require.NoError(t, s.WriteBatch(ctx, rows))
			}
			dumps = append(dumps, dumpTable(t, s, table))
		}
	}
	require.Len(t, dumps[0], len(rows))
	for i := 1; i < len(dumps); i++ {
		require.Equal(t, dumps[0], dumps[i], "table %d holds what the binary COPY wrote", i)
	}
}

// dumpTable is every row of table, its columns as PostgreSQL prints them,
// in the order written.
func dumpTable(t *testing.T, s *Store, table string) []string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), "SELECT concat_ws(' | ', "+strings.Join(columns, "::text, ")+"::text) FROM "+table+" ORDER BY id")
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

// TestPGCopyTableOfOtherTypesUsesPGX: a column whose type was changed by
// hand (message as varchar, duration_ns as numeric) is not one the binary
// encoder writes; the store sees it on open and writes through pgx, which
// asks the server for the types.
func TestPGCopyTableOfOtherTypesUsesPGX(t *testing.T) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	table := fmt.Sprintf("audit_types%d_%d", time.Now().UnixNano(), rand.IntN(1_000_000))
	s, err := OpenPostgres(ctx, dsn, Config{Table: table})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = s.pool.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
		_ = s.Close()
	})
	_, err = s.pool.Exec(ctx, "ALTER TABLE "+table+" ALTER COLUMN message TYPE varchar(200), ALTER COLUMN duration_ns TYPE numeric")
	require.NoError(t, err)
	_ = s.Close()
	s, err = OpenPostgres(ctx, dsn, Config{Table: table})
	require.NoError(t, err)
	assert.False(t, s.binaryCopy, "columns of other types are written through pgx")
	rows := []audit.Record{{Time: time.Now(), Kind: audit.KindTool, CallID: "c1", Tool: "t", Outcome: audit.OutcomeOK,
		Message: "m\x00", Duration: 1500 * time.Millisecond}}
	require.NoError(t, s.WriteBatch(ctx, rows))
	got, err := s.Query(ctx, Query{CallID: "c1"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "m\uFFFD", got[0].Message)
	assert.Equal(t, 1500*time.Millisecond, got[0].Duration)
}
