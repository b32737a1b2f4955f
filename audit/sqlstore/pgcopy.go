package sqlstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolmw/toolmw/audit"
)

// The PostgreSQL writer sends a batch as COPY ... FROM STDIN BINARY, the
// rows encoded here straight into the buffer pgconn sends from, rather than
// through pgx.CopyFrom: that takes each row as []any and encodes every value
// through pgx's type map (a plan looked up per value, each string boxed into
// an interface), a goroutine and an io.Pipe between the two; that was most
// of the writer's own CPU per row (BenchmarkCeiling/postgres). The
// encoding is PostgreSQL's binary COPY format
// (https://www.postgresql.org/docs/current/sql-copy.html, "Binary Format"),
// for the column types this package creates; a table whose columns have
// other types (altered by hand) is written through pgx.CopyFrom, which asks
// the server for the types (see [Store.binaryCopy]).

// pgTypes are the types the binary encoder writes, by column, as
// PostgreSQL's format_type names them.
var pgTypes = map[string]string{
	"ts": "timestamp with time zone", "duration_ns": "bigint", "status": "integer",
	"detail": "jsonb", "client_meta": "jsonb", "arguments": "jsonb", "notes": "jsonb",
	"request_bytes": "bigint", "response_bytes": "bigint", "content_blocks": "integer",
}

// pgBinaryTypes reports whether every column of table has the type the
// binary encoder writes (text for those pgTypes does not name).
func pgBinaryTypes(ctx context.Context, tx pgx.Tx, table string) (bool, error) {
	rows, err := tx.Query(ctx, "SELECT attname, format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped", table)
	if err != nil {
		return false, fmt.Errorf("cannot read the table's column types: %w", err)
	}
	defer rows.Close()
	have := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return false, fmt.Errorf("cannot read the table's column types: %w", err)
		}
		have[name] = typ
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("cannot read the table's column types: %w", err)
	}
	for _, c := range columns {
		want := pgTypes[c]
		if want == "" {
			want = "text"
		}
		if have[c] != want {
			return false, nil
		}
	}
	return true, nil
}

// copySQL is the COPY statement of table's binary stream.
func copySQL(table string) string {
	return "COPY " + pgx.Identifier{table}.Sanitize() + " (" + strings.Join(columns, ", ") + ") FROM STDIN BINARY"
}

// pgCopy is a batch as the binary COPY stream: an [io.Reader] that encodes
// rows as they are read.
type pgCopy struct {
	batch   []audit.Record
	next    int    // the next row to encode
	started bool   // the header is out
	ended   bool   // the trailer is out
	row     []byte // an encoded row, reused
	rest    []byte // what of row did not fit in the last Read
}

// copyHeader is the binary format's signature, flags and header extension
// length.
const copyHeader = "PGCOPY\n\xff\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00"

// Read fills p with the stream: the header, the rows, the trailer, then
// io.EOF. A read ends before a row that does not fit, as pgx's does, and
// only a row longer than p is split across reads (COPY's messages need not
// end on a row).
func (c *pgCopy) Read(p []byte) (int, error) {
	n := 0
	if !c.started {
		if len(p) < len(copyHeader) {
			return 0, io.ErrShortBuffer
		}
		n = copy(p, copyHeader)
		c.started = true
	}
	if len(c.rest) > 0 {
		k := copy(p[n:], c.rest)
		c.rest = c.rest[k:]
		n += k
	}
	for n < len(p) && len(c.rest) == 0 && c.next < len(c.batch) {
		c.row = appendPGRow(c.row[:0], &c.batch[c.next])
		c.next++
		if n > 0 && len(c.row) > len(p)-n {
			c.rest = c.row // it starts the next read
			break
		}
		k := copy(p[n:], c.row)
		c.rest = c.row[k:]
		n += k
	}
	if n < len(p) && len(c.rest) == 0 && c.next == len(c.batch) && !c.ended {
		if len(p)-n < 2 {
			return n, nil // the trailer goes in the next read
		}
		n += copy(p[n:], "\xff\xff") // a field count of -1
		c.ended = true
	}
	if c.ended && len(c.rest) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// microsecFromUnixToY2K is 2000-01-01 UTC, PostgreSQL's epoch, in
// microseconds after the Unix epoch.
const microsecFromUnixToY2K = 946_684_800 * 1_000_000

// appendPGRow appends r as one binary COPY tuple of the columns, with the
// values pgRows gives pgx (text made storable, JSON as jsonb accepts it).
func appendPGRow(b []byte, r *audit.Record) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(columns)))
	b = appendPGTime(b, r.Time)
	b = appendPGText(b, string(r.Kind))
	b = appendPGText(b, r.CallID)
	b = appendPGText(b, r.RequestID)
	b = appendPGText(b, r.SessionID)
	b = appendPGText(b, r.Transport)
	b = appendPGTextOf(b, pgTool(r.Tool))
	b = appendPGText(b, r.Subject)
	b = appendPGText(b, string(r.Outcome))
	b = appendPGText(b, string(r.Code))
	b = appendPGText(b, r.Message)
	detail, _ := jsonText(r.Detail) // it does not fail: see jsonText
	b = appendPGJSONB(b, pgJSON(detail))
	b = appendPGInt64(b, int64(r.Duration))
	meta, _ := jsonText(r.ClientMeta)
	b = appendPGJSONB(b, pgJSON(meta))
	b = appendPGJSONB(b, pgJSON(rawJSON(r.Arguments)))
	b = appendPGText(b, r.Method)
	b = appendPGText(b, r.Path)
	b = appendPGInt32(b, int32(r.Status))
	b = appendPGJSONB(b, pgJSON(notesText(r.Notes)))
	b = appendPGText(b, r.TraceID)
	b = appendPGText(b, r.SpanID)
	b = appendPGInt64(b, int64(r.RequestBytes))
	b = appendPGInt64(b, int64(r.ResponseBytes))
	return appendPGInt32(b, int32(min(max(r.ContentBlocks, 0), maxLegacyRows)))
}

// appendPGTime appends t as a timestamptz, as pgx encodes a time.Time.
func appendPGTime(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(t.Unix()*1_000_000+int64(t.Nanosecond())/1000-microsecFromUnixToY2K))
}

func appendPGInt64(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func appendPGInt32(b []byte, v int32) []byte {
	b = binary.BigEndian.AppendUint32(b, 4)
	return binary.BigEndian.AppendUint32(b, uint32(v))
}

// appendPGText appends s as text, made storable (pgText): ASCII without
// NUL, what nearly every value is, is checked in one pass and copied.
func appendPGText(b []byte, s string) []byte {
	if !plainASCII(s) {
		s = pgText(s)
	}
	return appendPGTextOf(b, s)
}

// appendPGTextOf appends s, storable already, as text.
func appendPGTextOf(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// appendPGJSONB appends JSON text j (storable already: pgJSON) as jsonb,
// or NULL for nil.
func appendPGJSONB(b []byte, j []byte) []byte {
	if j == nil {
		return binary.BigEndian.AppendUint32(b, 0xffffffff) // a length of -1
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(j)+1))
	b = append(b, 1) // jsonb's binary format version
	return append(b, j...)
}

// plainASCII reports whether s is ASCII without a NUL byte, eight bytes at
// a time: a byte with its high bit set, or one that is zero, sets the high
// bit of its lane in (w - 0x01...) &^ w or in w.
func plainASCII(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if (w|((w-ones)&^w))&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= 0x80 {
			return false
		}
	}
	return true
}

// copyBinary writes batch with one binary COPY on conn.
func (s *Store) copyBinary(ctx context.Context, conn *pgconn.PgConn, batch []audit.Record) (int64, error) {
	src := &pgCopy{batch: batch}
	tag, err := conn.CopyFrom(ctx, src, s.copySQL)
	return tag.RowsAffected(), err
}
