package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	msqlite "modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/toolmw/toolmw/audit"
)

// sqliteChunk is how many rows one prepared INSERT writes. modernc.org/sqlite
// matches each parameter to its argument by a linear search (quadratic in
// the statement's parameters), so a one-row statement (24 parameters),
// executed on the driver connection, is the fastest: see
// BenchmarkSQLiteChunk.
var sqliteChunk = 1

// OpenSQLite opens (creating it if needed) the SQLite database at path, in
// WAL mode, and creates or checks the audit table. path is a file path; the
// directory must exist and be writable. ":memory:" gives a private
// in-memory database (for tests). SQLite URI parameters may follow a '?'
// ("audit.db?mode=ro", say); a path that contains '?' itself is not
// supported.
//
// The WAL is checkpointed every 8,000 pages (about 32 MB) rather than
// SQLite's 1,000, which writes hot pages back to the database less often;
// URI parameters after '?' may set "_pragma=wal_autocheckpoint(N)" again.
//
// Errors name the problem: a missing directory, a path that is a directory,
// a directory or database that cannot be written, a table with a newer
// schema ([ErrNewerSchema]). OpenSQLite never panics.
func OpenSQLite(ctx context.Context, path string, opts Config) (*Store, error) {
	table, err := opts.table()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("sqlstore: sqlite: the database path is empty")
	}
	file, params, _ := strings.Cut(path, "?")
	memory := file == ":memory:"
	if opts.ReadOnly || hasParam(params, "mode", "ro") {
		return openSQLiteReadOnly(ctx, path, file, params, table)
	}
	if !memory {
		if err := checkSQLitePath(file); err != nil {
			return nil, err
		}
	}
	dsn := "file:" + file + "?_busy_timeout=10000&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_pragma=wal_autocheckpoint(8000)"
	if params != "" {
		dsn += "&" + params
	}
	if memory {
		dsn = "file::memory:?_txlock=immediate"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: sqlite %q: %w", path, err)
	}
	if memory {
		db.SetMaxOpenConns(1) // each connection would be its own database
	}
	s := &Store{dialect: sqlite, table: table, db: db}
	if err := s.initSQLite(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlstore: sqlite %q: %w", path, err)
	}
	if err := s.proveSQLite(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlstore: sqlite %q: %w", path, err)
	}
	return s, nil
}

// hasParam reports whether the URI parameters hold key=value.
func hasParam(params, key, value string) bool {
	for _, kv := range strings.Split(params, "&") {
		if k, v, _ := strings.Cut(kv, "="); k == key && v == value {
			return true
		}
	}
	return false
}

// openSQLiteReadOnly opens an existing database with mode=ro and checks
// that it holds a toolmw audit table; it never creates or changes a file.
func openSQLiteReadOnly(ctx context.Context, path, file, params, table string) (*Store, error) {
	st, err := os.Stat(file)
	switch {
	case err != nil:
		return nil, fmt.Errorf("sqlstore: sqlite %q: no database there: %w", path, err)
	case st.IsDir():
		return nil, fmt.Errorf("sqlstore: sqlite %q: the path is a directory, not a database file", path)
	}
	var keep []string
	for _, kv := range strings.Split(params, "&") {
		if k, _, _ := strings.Cut(kv, "="); kv != "" && k != "mode" && k != "_journal_mode" && k != "_txlock" {
			keep = append(keep, kv)
		}
	}
	extra := ""
	if len(keep) > 0 {
		extra = "&" + strings.Join(keep, "&")
	}
	// Without a -wal file every row is in the database file, and SQLite
	// would create the -wal and -shm files just to read it: open it as
	// immutable, which creates nothing. With one (a writer is running, or
	// stopped without a checkpoint), read through it.
	modes := []string{"mode=ro&immutable=1"}
	if _, err := os.Stat(file + "-wal"); err == nil {
		modes = []string{"mode=ro", "mode=ro&immutable=1"}
	}
	var lastErr error
	for _, mode := range modes {
		db, err := sql.Open("sqlite", "file:"+file+"?"+mode+"&_busy_timeout=10000&_pragma=query_only(1)"+extra)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: sqlite %q: %w", path, err)
		}
		s := &Store{dialect: sqlite, table: table, db: db, readOnly: true}
		if err := s.checkSQLiteReadOnly(ctx); err != nil {
			_ = db.Close()
			if errors.Is(err, ErrNotAudit) {
				return nil, fmt.Errorf("sqlstore: sqlite %q: %w", path, err)
			}
			lastErr = err
			continue
		}
		return s, nil
	}
	return nil, fmt.Errorf("sqlstore: sqlite %q: cannot read the database: %w", path, lastErr)
}

// checkSQLiteReadOnly checks, without writing, that the table is a toolmw
// audit table of a version this package reads.
func (s *Store) checkSQLiteReadOnly(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", s.table+"_schema").Scan(&n); err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return notAudit(s.table, "the file is not an SQLite database")
		}
		return err
	}
	if n == 0 {
		return notAudit(s.table, fmt.Sprintf("it has no table %q", s.table+"_schema"))
	}
	var version sql.NullInt64
	if err := s.db.QueryRowContext(ctx, "SELECT MAX(version) FROM "+s.table+"_schema").Scan(&version); err != nil {
		return fmt.Errorf("cannot read the schema version: %w", err)
	}
	switch {
	case !version.Valid:
		return notAudit(s.table, fmt.Sprintf("the table %q holds no version", s.table+"_schema"))
	case version.Int64 > SchemaVersion:
		return newerSchema(s.table, int(version.Int64))
	}
	s.version = int(version.Int64)
	have, err := sqliteColumns(ctx, s.db, s.table)
	if err != nil {
		return err
	}
	if err := checkColumns(s.table, have, s.version); err != nil {
		return notAudit(s.table, err.Error())
	}
	return nil
}

// sqlQuerier is a *sql.DB or a *sql.Tx.
type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func sqliteColumns(ctx context.Context, db sqlQuerier, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("cannot read the table's columns: %w", err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("cannot read the table's columns: %w", err)
		}
		have[name] = true
	}
	return have, rows.Err()
}

// proveSQLite checks, before the first row, that the store can work: the
// file passes quick_check, the table has the expected columns, and a row
// can be written (in a transaction rolled back).
func (s *Store) proveSQLite(ctx context.Context) error {
	var res string
	if err := s.db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res); err != nil {
		return fmt.Errorf("the integrity check failed: %w (restore the file from a backup, or move it away)", err)
	}
	if res != "ok" {
		return fmt.Errorf("the file is damaged: quick_check says %q (restore it from a backup, or move it away)", strings.ReplaceAll(res, "\n", "; "))
	}
	have, err := sqliteColumns(ctx, s.db, s.table)
	if err != nil {
		return err
	}
	if err := checkColumns(s.table, have, SchemaVersion); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cannot write: %w (check the file's permissions and the disk)", readOnly(err))
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+s.table+" (ts, kind, outcome, duration_ns) VALUES (0, 'probe', 'ok', 0)"); err != nil {
		return fmt.Errorf("cannot write a row: %w (check the file's permissions and the disk)", readOnly(err))
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+s.table+"_batches (spool, seq, first_row, row_count) VALUES ('probe', 0, 0, 1) ON CONFLICT DO NOTHING"); err != nil {
		return fmt.Errorf("cannot write the ledger: %w (check the file's permissions and the disk)", readOnly(err))
	}
	return nil // rolled back
}

// checkSQLitePath gives clear errors for the usual mistakes before SQLite
// gives a vague one.
func checkSQLitePath(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("sqlstore: sqlite %q: the directory %q does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("sqlstore: sqlite %q: the directory %q: %w", path, dir, err)
	case !st.IsDir():
		return fmt.Errorf("sqlstore: sqlite %q: %q is not a directory", path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("sqlstore: sqlite %q: the path is a directory, not a database file", path)
	}
	// SQLite writes the -wal and -shm files next to the database: the
	// directory itself must be writable.
	f, err := os.CreateTemp(dir, ".toolmw-audit-probe-*")
	if err != nil {
		return fmt.Errorf("sqlstore: sqlite %q: the directory %q is not writable: %w", path, dir, err)
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return nil
}

func (s *Store) initSQLite(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("cannot open the database: %w", readOnly(err))
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("cannot read the journal mode: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cannot begin the schema transaction: %w", readOnly(err))
	}
	defer func() { _ = tx.Rollback() }()
	t := s.table
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+t+`_schema (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("cannot create the schema table: %w", readOnly(err))
	}
	var version sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM `+t+`_schema`).Scan(&version); err != nil {
		return fmt.Errorf("cannot read the schema version: %w", err)
	}
	s.version = SchemaVersion
	var stmts []string
	switch {
	case version.Valid && version.Int64 > SchemaVersion:
		return newerSchema(t, int(version.Int64))
	case version.Valid && version.Int64 == SchemaVersion:
		return tx.Commit()
	case version.Valid:
		// An older table: it must have its version's columns before it is
		// changed (a table of another shape is refused untouched).
		have, err := sqliteColumns(ctx, tx, t)
		if err != nil {
			return err
		}
		if err := checkColumns(t, have, int(version.Int64)); err != nil {
			return err
		}
		if version.Int64 < 2 {
			stmts = sqliteV2(t)
		}
		if version.Int64 < 3 {
			stmts = append(stmts, sqliteV3(t)...)
		}
		stmts = append(stmts, sqliteV4(t)...)
	default:
		stmts = append(append(append(sqliteV1(t), sqliteV2(t)...), sqliteV3(t)...), sqliteV4(t)...)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("cannot create the audit table: %w", readOnly(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("cannot commit the schema: %w", readOnly(err))
	}
	return nil
}

// sqliteV4 upgrades a version-3 table to version 4: the request and
// response sizes and the number of content blocks of a row (older rows
// read 0), and the ledger's range of rows per entry, for a batch written
// in parts. SQLite cannot change a table's primary key: the ledger is
// copied into a new table, its older entries (each a whole batch) with
// first_row 0 and the largest row count.
func sqliteV4(t string) []string {
	return []string{
		`ALTER TABLE ` + t + ` ADD COLUMN request_bytes INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE ` + t + ` ADD COLUMN response_bytes INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE ` + t + ` ADD COLUMN content_blocks INTEGER NOT NULL DEFAULT 0`,
		`CREATE TABLE ` + t + `_batches_v4 (spool TEXT NOT NULL, seq INTEGER NOT NULL, first_row INTEGER NOT NULL,
			row_count INTEGER NOT NULL, PRIMARY KEY (spool, seq, first_row)) WITHOUT ROWID`,
		`INSERT INTO ` + t + `_batches_v4 (spool, seq, first_row, row_count) SELECT spool, seq, 0, ` + fmt.Sprint(maxLegacyRows) + ` FROM ` + t + `_batches`,
		`DROP TABLE ` + t + `_batches`,
		`ALTER TABLE ` + t + `_batches_v4 RENAME TO ` + t + `_batches`,
		`INSERT INTO ` + t + `_schema (version) VALUES (4)`,
	}
}

// sqliteV3 upgrades a version-2 table to version 3: the notes (JSON) and
// the trace and span ids of a row. Rows written before have none.
func sqliteV3(t string) []string {
	return []string{
		`ALTER TABLE ` + t + ` ADD COLUMN notes TEXT`,
		`ALTER TABLE ` + t + ` ADD COLUMN trace_id TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE ` + t + ` ADD COLUMN span_id TEXT NOT NULL DEFAULT ''`,
		`INSERT INTO ` + t + `_schema (version) VALUES (3)`,
	}
}

// sqliteV2 upgrades a version-1 table to version 2: the ledger of batches
// written from a spool.
func sqliteV2(t string) []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + t + `_batches (spool TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (spool, seq)) WITHOUT ROWID`,
		`INSERT INTO ` + t + `_schema (version) VALUES (2)`,
	}
}

// sqliteV1 creates the version-1 table.
func sqliteV1(t string) []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (
			id INTEGER PRIMARY KEY,
			ts INTEGER NOT NULL,
			kind TEXT NOT NULL,
			call_id TEXT NOT NULL DEFAULT '',
			request_id TEXT NOT NULL DEFAULT '',
			session_id TEXT NOT NULL DEFAULT '',
			transport TEXT NOT NULL DEFAULT '',
			tool TEXT NOT NULL DEFAULT '',
			subject TEXT NOT NULL DEFAULT '',
			outcome TEXT NOT NULL,
			code TEXT NOT NULL DEFAULT '',
			message TEXT NOT NULL DEFAULT '',
			detail TEXT,
			duration_ns INTEGER NOT NULL,
			client_meta TEXT,
			arguments TEXT,
			method TEXT NOT NULL DEFAULT '',
			path TEXT NOT NULL DEFAULT '',
			status INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX IF NOT EXISTS ` + t + `_ts ON ` + t + ` (ts)`,
		`INSERT INTO ` + t + `_schema (version) VALUES (1)`,
	}
}

// readOnly makes SQLite's read-only and disk-full errors say so plainly. It
// reads the *sqlite.Error's result code (primary code: the low byte of an
// extended one), never the error's text.
func readOnly(err error) error {
	var se *msqlite.Error
	if !errors.As(err, &se) || se == nil {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_READONLY:
		return fmt.Errorf("the database is read-only: %w", err)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("the disk is full: %w", err)
	}
	return err
}

func insertSQL(table string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES ")
	one := "(" + strings.Repeat("?, ", len(columns)-1) + "?)"
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return b.String()
}

// nullText is a nullable TEXT argument: nil for nil, else a string (a
// []byte would be stored as a BLOB).
func nullText(b []byte) driver.Value {
	if b == nil {
		return nil
	}
	return string(b)
}

// setText sets a TEXT argument to v, keeping the previous row's boxed
// value when it is the same string (kind, session, tool, subject and
// outcome mostly are), which saves an allocation per column.
func setText(a *driver.NamedValue, v string) {
	if prev, ok := a.Value.(string); ok && prev == v {
		return
	}
	a.Value = v
}

// setSQLiteArgs sets args (len(columns) of them) to r's values.
func setSQLiteArgs(args []driver.NamedValue, r *audit.Record) error {
	detail, err := jsonText(r.Detail)
	if err != nil {
		return err
	}
	meta, err := jsonText(r.ClientMeta)
	if err != nil {
		return err
	}
	args[0].Value = r.Time.UnixNano()
	setText(&args[1], string(r.Kind))
	setText(&args[2], r.CallID)
	setText(&args[3], r.RequestID)
	setText(&args[4], r.SessionID)
	setText(&args[5], r.Transport)
	setText(&args[6], r.Tool)
	setText(&args[7], r.Subject)
	setText(&args[8], string(r.Outcome))
	setText(&args[9], string(r.Code))
	setText(&args[10], r.Message)
	args[11].Value = nullText(detail)
	args[12].Value = int64(r.Duration)
	args[13].Value = nullText(meta)
	args[14].Value = nullText(rawJSON(r.Arguments))
	setText(&args[15], r.Method)
	setText(&args[16], r.Path)
	args[17].Value = int64(r.Status)
	args[18].Value = nullText(notesText(r.Notes))
	setText(&args[19], r.TraceID)
	setText(&args[20], r.SpanID)
	args[21].Value = int64(r.RequestBytes)
	args[22].Value = int64(r.ResponseBytes)
	args[23].Value = int64(r.ContentBlocks)
	return nil
}

// writeSQLite writes the batch in one transaction through a prepared
// INSERT of sqliteChunk rows, executed on the driver's connection directly
// (database/sql's per-call argument conversion and locking cost as much as
// the insert). Every value is a bound parameter: nothing from the record
// is ever part of the SQL text.
func (s *Store) writeSQLiteOnce(ctx context.Context, id *audit.BatchID, batch []audit.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlstore: sqlite: begin: %w", readOnly(err))
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error { return s.writeSQLiteConn(ctx, dc, id, batch) })
}

func (s *Store) writeSQLiteConn(ctx context.Context, dc any, id *audit.BatchID, batch []audit.Record) (err error) {
	bt, ok1 := dc.(driver.ConnBeginTx)
	pc, ok2 := dc.(driver.ConnPrepareContext)
	if !ok1 || !ok2 {
		return fmt.Errorf("sqlstore: sqlite: the driver connection %T cannot begin or prepare with a context", dc)
	}
	tx, err := bt.BeginTx(ctx, driver.TxOptions{})
	if err != nil {
		return fmt.Errorf("sqlstore: sqlite: begin: %w", readOnly(err))
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// The per-statement context has no Done channel: modernc.org/sqlite
	// starts a goroutine per statement to watch one. ctx is checked between
	// statements instead, and bounds BEGIN (the busy wait).
	stmtCtx := context.WithoutCancel(ctx)
	if id != nil {
		batch, err = s.ledgerSQLite(stmtCtx, pc, id, batch)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			_ = tx.Rollback()
			return nil // written before
		}
	}
	ncol := len(columns)
	for len(batch) > 0 {
		n := min(len(batch), sqliteChunk)
		st, err := pc.PrepareContext(ctx, insertSQL(s.table, n))
		if err != nil {
			return fmt.Errorf("sqlstore: sqlite: prepare insert: %w", readOnly(err))
		}
		ex, ok := st.(driver.StmtExecContext)
		if !ok {
			_ = st.Close()
			return fmt.Errorf("sqlstore: sqlite: the driver statement %T cannot execute with a context", st)
		}
		if cap(s.args) < n*ncol {
			s.args = make([]driver.NamedValue, n*ncol)
		}
		args := s.args[:n*ncol]
		for i := range args {
			args[i].Ordinal = i + 1
		}
		for len(batch) >= n {
			if cerr := ctx.Err(); cerr != nil {
				err = fmt.Errorf("sqlstore: sqlite: insert: %w", cerr)
				break
			}
			for i := range batch[:n] {
				if err = setSQLiteArgs(args[i*ncol:(i+1)*ncol], &batch[i]); err != nil {
					break
				}
			}
			if err != nil {
				break
			}
			if _, err = ex.ExecContext(stmtCtx, args); err != nil {
				err = fmt.Errorf("sqlstore: sqlite: insert: %w", refusedSQLite(readOnly(err)))
				break
			}
			batch = batch[n:]
		}
		clear(args) // drop references to the rows
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("sqlstore: sqlite: insert: %w", cerr)
		}
		if err != nil {
			return err
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: sqlite: commit: %w", readOnly(err))
	}
	return nil
}

// ledgerSQLite records id's range of rows in the ledger and returns the
// rows of batch still to write: all of them, unless ranges recorded before
// cover some (the batch was written in parts, see [audit.BatchID]).
func (s *Store) ledgerSQLite(ctx context.Context, pc driver.ConnPrepareContext, id *audit.BatchID, batch []audit.Record) ([]audit.Record, error) {
	prev, err := s.ledgerSpans(ctx, pc, id)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: sqlite: ledger: %w", readOnly(err))
	}
	n := len(batch)
	if len(prev) > 0 {
		if batch = uncovered(prev, id.First, batch); len(batch) == 0 {
			return nil, nil
		}
	}
	st, err := pc.PrepareContext(ctx, "INSERT INTO "+s.table+"_batches (spool, seq, first_row, row_count) VALUES (?, ?, ?, ?) "+
		"ON CONFLICT (spool, seq, first_row) DO UPDATE SET row_count = max(row_count, excluded.row_count)")
	if err != nil {
		return nil, fmt.Errorf("sqlstore: sqlite: ledger: %w", readOnly(err))
	}
	defer st.Close()
	ex, ok := st.(driver.StmtExecContext)
	if !ok {
		return nil, fmt.Errorf("sqlstore: sqlite: the driver statement %T cannot execute with a context", st)
	}
	if _, err := ex.ExecContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: id.Spool}, {Ordinal: 2, Value: int64(id.Seq)},
		{Ordinal: 3, Value: int64(id.First)}, {Ordinal: 4, Value: int64(n)}}); err != nil {
		return nil, fmt.Errorf("sqlstore: sqlite: ledger: %w", readOnly(err))
	}
	return batch, nil
}

// ledgerSpans returns the ranges the ledger holds for id's batch.
func (s *Store) ledgerSpans(ctx context.Context, pc driver.ConnPrepareContext, id *audit.BatchID) ([]span, error) {
	st, err := pc.PrepareContext(ctx, "SELECT first_row, row_count FROM "+s.table+"_batches WHERE spool = ? AND seq = ?")
	if err != nil {
		return nil, err
	}
	defer st.Close()
	q, ok := st.(driver.StmtQueryContext)
	if !ok {
		return nil, fmt.Errorf("the driver statement %T cannot query with a context", st)
	}
	rows, err := q.QueryContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: id.Spool}, {Ordinal: 2, Value: int64(id.Seq)}})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []span
	dest := make([]driver.Value, 2)
	for {
		if err := rows.Next(dest); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		first, ok1 := dest[0].(int64)
		count, ok2 := dest[1].(int64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("the ledger holds %T and %T, not integers", dest[0], dest[1])
		}
		out = append(out, span{first, count})
	}
}

// refusedSQLite marks err with [audit.ErrRowRefused] when SQLite refused a
// row for its data: SQLITE_TOOBIG (a value over SQLITE_LIMIT_LENGTH, 1e9
// bytes unless lowered), SQLITE_CONSTRAINT (a CHECK, NOT NULL, UNIQUE or
// a trigger's RAISE of the user's own on the table) or SQLITE_MISMATCH.
// SQLite stores any text and any JSON in the TEXT columns toolmw makes, so
// only those refuse a row. Every other error (busy, locked, I/O, a full
// disk, read-only) is an outage, and is returned as it is.
func refusedSQLite(err error) error {
	var se *msqlite.Error
	if !errors.As(err, &se) || se == nil {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH:
		return fmt.Errorf("%w: %w", audit.ErrRowRefused, err)
	}
	return err
}

// selectColumnsSQLite are the columns Query reads; a table older than
// version 3 has no notes, trace or span ids.
func (s *Store) selectColumnsSQLite() string {
	const v2 = "ts, kind, call_id, request_id, session_id, transport, tool, subject, outcome, code, message, detail, duration_ns, client_meta, arguments, method, path, status"
	switch {
	case s.version < 3:
		return v2 + ", NULL, '', '', 0, 0, 0"
	case s.version == 3:
		return v2 + ", notes, trace_id, span_id, 0, 0, 0"
	}
	return v2 + ", notes, trace_id, span_id, request_bytes, response_bytes, content_blocks"
}

func (s *Store) querySQLite(ctx context.Context, q Query) ([]audit.Record, error) {
	where, args := q.where(func(int) string { return "?" }, func(t time.Time) any { return t.UnixNano() })
	rows, err := s.db.QueryContext(ctx, "SELECT "+s.selectColumnsSQLite()+" FROM "+s.table+where+
		" ORDER BY ts DESC, id DESC LIMIT "+fmt.Sprint(q.limit()), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: sqlite: query: %w", err)
	}
	defer rows.Close()
	var out []audit.Record
	for rows.Next() {
		var sc scanned
		r := &sc.rec
		if err := rows.Scan(&sc.ts, &sc.kind, &r.CallID, &r.RequestID, &r.SessionID, &r.Transport, &r.Tool, &r.Subject,
			&sc.outcome, &sc.code, &r.Message, &sc.detail, &sc.durNS, &sc.meta, &sc.arguments, &r.Method, &r.Path, &sc.status,
			&sc.notes, &r.TraceID, &r.SpanID, &sc.reqBytes, &sc.respBytes, &sc.blocks); err != nil {
			return nil, fmt.Errorf("sqlstore: sqlite: scan: %w", err)
		}
		r.Time = time.Unix(0, sc.ts)
		rec, err := sc.finish()
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: sqlite: query: %w", err)
	}
	return out, nil
}
