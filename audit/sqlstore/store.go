package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// SchemaVersion is the version of the table layout this package writes. It
// is stored in the table "<table>_schema" and checked on open. Version 2
// added the ledger "<table>_batches" (and, on PostgreSQL, the index on
// call_id); version 3 the columns notes, trace_id and span_id; version 4
// the columns request_bytes, response_bytes and content_blocks, and the
// ledger's first_row and row_count (a batch written in parts, see
// [audit.BatchID]). A table of an older version is upgraded when a writer
// opens it; a reader ([Config.ReadOnly]) reads it as it is, with those
// fields empty.
const SchemaVersion = 4

// DefaultTable is the table rows go to when [Config.Table] is empty.
const DefaultTable = "toolmw_audit"

// ErrNewerSchema is returned (wrapped, with both versions) when the table
// was created by a newer version of toolmw than this one.
var ErrNewerSchema = errors.New("the audit table's schema is newer than this version of toolmw supports")

// Config configures [OpenSQLite] and [OpenPostgres]. The zero value gives
// the defaults.
type Config struct {
	// Table is the table's name: lower-case letters, digits and '_', not starting with a
	// digit, at most 48 bytes. Default [DefaultTable]. For
	// PostgreSQL, pick the schema with search_path in the DSN.
	Table string
	// ReadOnly opens the store for reading only ([Store.Query], [Store.Count]):
	// nothing is created, upgraded or changed (SQLite: mode=ro; PostgreSQL:
	// read-only transactions), and a database without a toolmw audit table
	// of a known version is refused ("not a toolmw audit database"). An
	// SQLite path with "?mode=ro" opens read-only too.
	ReadOnly bool
}

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`)

func (o Config) table() (string, error) {
	if o.Table == "" {
		return DefaultTable, nil
	}
	if !tableName.MatchString(o.Table) {
		return "", fmt.Errorf("sqlstore: invalid table name %q: use lower-case letters, digits and '_', at most 48 bytes, not starting with a digit", o.Table)
	}
	return o.Table, nil
}

type dialect int

const (
	sqlite dialect = iota
	postgres
)

// Store is an audit table in SQLite or PostgreSQL. It is an [audit.Sink]
// (put it behind [audit.NewAsync]): each WriteBatch is one transaction, so a
// batch is written whole or not at all and may be retried. [Store.Query]
// reads rows back. A Store is safe for concurrent use.
type Store struct {
	dialect  dialect
	table    string
	readOnly bool
	version  int           // the table's schema version: SchemaVersion but for a reader of an older table
	db       *sql.DB       // SQLite
	pool     *pgxpool.Pool // PostgreSQL
	// binaryCopy is set when the table's columns have the types pgCopy
	// encodes (checked on open); copySQL is its COPY statement.
	binaryCopy bool
	copySQL    string

	mu     sync.Mutex          // serialises SQLite batches; guards args and closed
	args   []driver.NamedValue // the SQLite INSERT's arguments, reused
	closed bool
}

// Table returns the table's name.
func (s *Store) Table() string { return s.table }

// Close closes the database handle. Close the [audit.Async] in front of the
// store first, so that its last batches are written.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.pool != nil {
		s.pool.Close()
		return nil
	}
	return s.db.Close()
}

// columns are the row's columns, in insert order.
var columns = []string{
	"ts", "kind", "call_id", "request_id", "session_id", "transport", "tool", "subject",
	"outcome", "code", "message", "detail", "duration_ns", "client_meta", "arguments",
	"method", "path", "status", "notes", "trace_id", "span_id",
	"request_bytes", "response_bytes", "content_blocks",
}

// columnsOf returns the columns a table of schema version v has.
func columnsOf(v int) []string {
	switch {
	case v < 3:
		return columns[:18]
	case v == 3:
		return columns[:21]
	}
	return columns
}

// note is how a [toolctx.Note] is stored: notes are a JSON array of
// {"key": ..., "value": ...} objects, in the order they were noted.
type note struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// notesText encodes notes as JSON text, or returns nil for none.
func notesText(notes []toolctx.Note) []byte {
	if len(notes) == 0 {
		return nil
	}
	out := make([]note, len(notes))
	for i, n := range notes {
		out[i] = note(n)
	}
	b, _ := json.Marshal(out) // strings only: it cannot fail
	return b
}

// jsonText encodes a map as JSON text, or returns nil for an empty map.
func jsonText(m map[string]any) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		// Detail and _meta come from JSON or from code that meant them to be
		// JSON; record what went wrong rather than fail the batch forever.
		return json.Marshal(map[string]string{"toolmw_unencodable": err.Error()})
	}
	return b, nil
}

// rawJSON returns raw when it is valid JSON, raw as a JSON string when it
// is not, and nil for empty.
func rawJSON(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}

// Query selects rows for [Store.Query]. Zero fields do not filter.
type Query struct {
	// Since and Until bound the rows' start time: Since <= time < Until.
	Since, Until time.Time
	// Kind selects tool or HTTP rows.
	Kind audit.Kind
	// Tool selects one tool's rows.
	Tool string
	// Outcome selects one outcome.
	Outcome audit.RowOutcome
	// Code selects one error code.
	Code errs.Code
	// CallID selects one call's row.
	CallID string
	// Limit caps the number of rows returned: default 100, at most 10,000.
	Limit int
}

// MaxQueryLimit is the largest [Query.Limit].
const MaxQueryLimit = 10000

// where builds the WHERE clause with placeholders made by ph(n) (1-based).
func (q Query) where(ph func(int) string, ts func(time.Time) any) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.Replace(cond, "?", ph(len(args)), 1))
	}
	if !q.Since.IsZero() {
		add("ts >= ?", ts(q.Since))
	}
	if !q.Until.IsZero() {
		add("ts < ?", ts(q.Until))
	}
	if q.Kind != "" {
		add("kind = ?", string(q.Kind))
	}
	if q.Tool != "" {
		add("tool = ?", q.Tool)
	}
	if q.Outcome != "" {
		add("outcome = ?", string(q.Outcome))
	}
	if q.Code != "" {
		add("code = ?", string(q.Code))
	}
	if q.CallID != "" {
		add("call_id = ?", q.CallID)
		conds = append(conds, "call_id <> ''") // PostgreSQL's partial index on call_id has this predicate
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func (q Query) limit() int {
	switch {
	case q.Limit <= 0:
		return 100
	case q.Limit > MaxQueryLimit:
		return MaxQueryLimit
	}
	return q.Limit
}

// Query returns the rows q selects, newest first (by start time, then by
// insertion order), at most q.Limit of them: what an operator reads to
// answer "why did this tool fail".
func (s *Store) Query(ctx context.Context, q Query) ([]audit.Record, error) {
	if s.dialect == postgres {
		return s.queryPostgres(ctx, q)
	}
	return s.querySQLite(ctx, q)
}

// scanned holds one row's nullable JSON columns while it is scanned.
type scanned struct {
	rec                     audit.Record
	ts, durNS               int64
	status                  int64
	reqBytes, respBytes     int64
	blocks                  int64
	kind, outcome, code     string
	detail, meta, arguments []byte
	notes                   []byte
}

func (sc *scanned) finish() (audit.Record, error) {
	r := sc.rec
	r.Kind, r.Outcome, r.Code = audit.Kind(sc.kind), audit.RowOutcome(sc.outcome), errs.Code(sc.code)
	r.Duration = time.Duration(sc.durNS)
	r.Status = int(sc.status)
	r.RequestBytes, r.ResponseBytes, r.ContentBlocks = int(sc.reqBytes), int(sc.respBytes), int(sc.blocks)
	if len(sc.detail) > 0 {
		if err := json.Unmarshal(sc.detail, &r.Detail); err != nil {
			return r, fmt.Errorf("sqlstore: decode detail: %w", err)
		}
	}
	if len(sc.meta) > 0 {
		if err := json.Unmarshal(sc.meta, &r.ClientMeta); err != nil {
			return r, fmt.Errorf("sqlstore: decode client_meta: %w", err)
		}
	}
	if len(sc.arguments) > 0 {
		r.Arguments = json.RawMessage(append([]byte(nil), sc.arguments...))
	}
	if len(sc.notes) > 0 {
		var notes []note
		if err := json.Unmarshal(sc.notes, &notes); err != nil {
			return r, fmt.Errorf("sqlstore: decode notes: %w", err)
		}
		r.Notes = make([]toolctx.Note, len(notes))
		for i, n := range notes {
			r.Notes[i] = toolctx.Note(n)
		}
	}
	return r, nil
}

// ErrNotAudit is returned (wrapped) when a database or table opened
// read-only is not a toolmw audit table.
var ErrNotAudit = errors.New("not a toolmw audit database")

// notAudit says what is missing and what to do.
func notAudit(table, what string) error {
	return fmt.Errorf("%w: %s (pass the path or DSN the server writes to, and -table if it uses another table than %q)", ErrNotAudit, what, table)
}

// checkColumns reports the columns of a table of schema version v that
// have is missing.
func checkColumns(table string, have map[string]bool, v int) error {
	var missing []string
	for _, c := range append([]string{"id"}, columnsOf(v)...) {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the table %q lacks the columns %s of a toolmw audit table: it was not made by toolmw; use another table (Config.Table) or database", table, strings.Join(missing, ", "))
	}
	return nil
}

func newerSchema(table string, found int) error {
	return fmt.Errorf("sqlstore: table %q has schema version %d and this toolmw supports up to %d: upgrade toolmw, or use another table: %w",
		table, found, SchemaVersion, ErrNewerSchema)
}

// WriteBatch writes batch in one transaction (SQLite: a prepared one-row
// INSERT per row, every value bound; PostgreSQL: one COPY). On error nothing of the
// batch was written, so it can be retried whole.
func (s *Store) WriteBatch(ctx context.Context, batch []audit.Record) error {
	if len(batch) == 0 {
		return nil
	}
	if s.readOnly {
		return errReadOnly
	}
	if s.dialect == postgres {
		return s.writePostgresOnce(ctx, nil, batch)
	}
	return s.writeSQLiteOnce(ctx, nil, batch)
}

// WriteBatchOnce writes batch and records id in the ledger table
// "<table>_batches", in one transaction; when id is there already, the
// batch was written before and nothing is done. It makes the store an
// [audit.OnceSink]: a batch replayed from an [audit.Spool] after a crash,
// or after a write whose commit looked failed, is written exactly once.
// batch is the rows [id.First, id.First+len(batch)) of the batch id.Seq
// numbers: the ledger records that range, and the rows that ranges
// recorded before cover are skipped, so a batch written in parts (to find
// a row the store refused) and then whole is still written once.
func (s *Store) WriteBatchOnce(ctx context.Context, id audit.BatchID, batch []audit.Record) error {
	if len(batch) == 0 {
		return nil
	}
	if s.readOnly {
		return errReadOnly
	}
	if s.dialect == postgres {
		return s.writePostgresOnce(ctx, &id, batch)
	}
	return s.writeSQLiteOnce(ctx, &id, batch)
}

// ForgetBatches deletes the ledger's ids of spool below seq: the spool will
// not send those batches again. The ledger holds, per spool, only the
// batches that spool may still replay.
func (s *Store) ForgetBatches(ctx context.Context, spool string, below uint64) error {
	if s.readOnly {
		return errReadOnly
	}
	q := "DELETE FROM " + s.table + "_batches WHERE spool = $1 AND seq < $2"
	if s.dialect == postgres {
		if _, err := s.pool.Exec(ctx, q, spool, int64(below)); err != nil {
			return fmt.Errorf("sqlstore: postgres: forget batches: %w", err)
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if _, err := s.db.ExecContext(ctx, strings.NewReplacer("$1", "?", "$2", "?").Replace(q), spool, int64(below)); err != nil {
		return fmt.Errorf("sqlstore: sqlite: forget batches: %w", err)
	}
	return nil
}

var _ audit.OnceSink = (*Store)(nil)

// span is a range of rows [first, first+count) of a numbered batch, as the
// ledger records it.
type span struct{ first, count int64 }

// uncovered returns the rows of batch (rows [first, first+len(batch)) of
// their numbered batch) that no span of prev covers.
func uncovered(prev []span, first int, batch []audit.Record) []audit.Record {
	covered := func(i int64) bool {
		for _, p := range prev {
			if i >= p.first && i < p.first+p.count {
				return true
			}
		}
		return false
	}
	var out []audit.Record
	for i := range batch {
		if !covered(int64(first + i)) {
			out = append(out, batch[i])
		}
	}
	return out
}

// maxLegacyRows is the row count a ledger entry of a table older than
// version 4 gets: such an entry recorded a whole batch.
const maxLegacyRows = 2147483647

var errReadOnly = errors.New("sqlstore: the store was opened read-only")

// Count returns how many rows q selects, ignoring q.Limit.
func (s *Store) Count(ctx context.Context, q Query) (int64, error) {
	var n int64
	if s.dialect == postgres {
		where, args := q.where(func(n int) string { return fmt.Sprintf("$%d", n) }, func(t time.Time) any { return t })
		if err := s.readTx(ctx, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT COUNT(*) FROM "+s.table+where, args...).Scan(&n)
		}); err != nil {
			return 0, fmt.Errorf("sqlstore: postgres: count: %w", err)
		}
		return n, nil
	}
	where, args := q.where(func(int) string { return "?" }, func(t time.Time) any { return t.UnixNano() })
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+s.table+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlstore: sqlite: count: %w", err)
	}
	return n, nil
}
