package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolmw/toolmw/audit"
)

// OpenPostgres connects to the PostgreSQL server at dsn (a URL or a
// key=value string, as pgx takes) and creates or checks the audit table in
// one transaction, under an advisory lock so that replicas starting
// together do not race. Batches are written with COPY.
//
// Errors name the problem: a DSN that does not parse, a server that cannot
// be reached, a table with a newer schema ([ErrNewerSchema]). OpenPostgres
// never panics.
func OpenPostgres(ctx context.Context, dsn string, opts Config) (*Store, error) {
	table, err := opts.table()
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: the DSN cannot be parsed: %w", err)
	}
	if !opts.ReadOnly {
		cfg.AfterConnect = keepCopyMemory
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("sqlstore: postgres: cannot connect to %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	s := &Store{dialect: postgres, table: table, pool: pool, readOnly: opts.ReadOnly}
	check := func(ctx context.Context) error {
		if err := s.initPostgres(ctx); err != nil {
			return err
		}
		return s.provePostgres(ctx)
	}
	if opts.ReadOnly {
		check = s.checkPostgresReadOnly
	}
	if err := check(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("sqlstore: postgres: table %q: %w", table, err)
	}
	return s, nil
}

// keepCopyMemory runs, on each connection a writing store opens, one
// statement that makes the backend allocate 4 MiB and free it. Each COPY
// allocates its tuple slots (about 100 blocks of 8 KiB for a batch of 2048
// rows) and frees them when the statement ends; where those blocks lie at
// the top of the backend's heap, glibc's malloc, with its default trim
// threshold of 128 KiB, gives them back to the system one brk at a time,
// and the next COPY faults them in again. Whether they lie there depends on
// what the backend did before (a backend whose first insert into the table
// was the probe row of provePostgres, or a COPY of fewer rows than later
// ones, has them there for good), so it cannot be left to the order of
// statements. Freeing a chunk it had mapped on its own (any allocation
// above 128 KiB) raises glibc's trim threshold to twice that chunk's size,
// 8 MiB here, for the life of the process: the slots' memory then stays in
// the heap from one COPY to the next (the backend keeps up to 8 MiB it
// has freed instead of giving it back). Measured on PostgreSQL 15 with
// glibc 2.36, batches of 2048 rows: without it 100 brk calls and 180 more
// page faults per COPY (0.150 faults per row against the driver's 0.056)
// and 3-17% (median 10%) more server CPU per row than the driver's own
// connection on the same bytes, batch by batch (BenchmarkCeilingServer in
// bench). With another malloc it costs one statement per connection; the
// server refusing it costs nothing more.
func keepCopyMemory(ctx context.Context, c *pgx.Conn) error {
	_, err := c.Exec(ctx, keepCopyMemorySQL)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return nil
	}
	return err
}

// keepCopyMemorySQL allocates 4 MiB in the backend (planning evaluates
// repeat, an immutable function of constants) and frees it.
const keepCopyMemorySQL = "SELECT length(repeat('x', 4194304))"

// readTx runs f in a read-only transaction.
func (s *Store) readTx(ctx context.Context, f func(pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// checkPostgresReadOnly checks, in a read-only transaction, that the table
// is a toolmw audit table of a version this package reads.
func (s *Store) checkPostgresReadOnly(ctx context.Context) error {
	t := s.table
	return s.readTx(ctx, func(tx pgx.Tx) error {
		var schema, main *string
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1)::text, to_regclass($2)::text", t+"_schema", t).Scan(&schema, &main); err != nil {
			return fmt.Errorf("cannot look the table up: %w", err)
		}
		if schema == nil || main == nil {
			return notAudit(t, fmt.Sprintf("there is no table %q with its %q", t, t+"_schema"))
		}
		var version *int32
		if err := tx.QueryRow(ctx, "SELECT MAX(version) FROM "+t+"_schema").Scan(&version); err != nil {
			return fmt.Errorf("cannot read the schema version: %w", err)
		}
		switch {
		case version == nil:
			return notAudit(t, fmt.Sprintf("the table %q holds no version", t+"_schema"))
		case *version > SchemaVersion:
			return newerSchema(t, int(*version))
		}
		s.version = int(*version)
		have, err := postgresColumns(ctx, tx, t)
		if err != nil {
			return err
		}
		if err := checkColumns(t, have, s.version); err != nil {
			return notAudit(t, err.Error())
		}
		return nil
	})
}

func postgresColumns(ctx context.Context, tx pgx.Tx, table string) (map[string]bool, error) {
	rows, err := tx.Query(ctx, "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped", table)
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

// provePostgres checks, before the first row, that the table has the
// expected columns and that a row and a ledger entry can be written (in a
// transaction rolled back).
func (s *Store) provePostgres(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("cannot begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	have, err := postgresColumns(ctx, tx, s.table)
	if err != nil {
		return err
	}
	if err := checkColumns(s.table, have, SchemaVersion); err != nil {
		return err
	}
	if s.binaryCopy, err = pgBinaryTypes(ctx, tx, s.table); err != nil {
		return err
	}
	s.copySQL = copySQL(s.table)
	if _, err := tx.Exec(ctx, "INSERT INTO "+s.table+" (ts, kind, outcome, duration_ns) VALUES (now(), 'probe', 'ok', 0)"); err != nil {
		return fmt.Errorf("cannot write a row: %w (grant INSERT on the table to this user, or check the server)", err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+s.table+"_batches (spool, seq, first_row, row_count) VALUES ('probe', 0, 0, 1) ON CONFLICT DO NOTHING"); err != nil {
		return fmt.Errorf("cannot write the ledger: %w (grant INSERT, DELETE on %s_batches to this user)", err, s.table)
	}
	return nil // rolled back
}

func (s *Store) initPostgres(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("cannot begin the schema transaction: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	t := s.table
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "toolmw_audit_schema:"+t); err != nil {
		return fmt.Errorf("cannot take the schema lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+t+`_schema (version integer NOT NULL)`); err != nil {
		return fmt.Errorf("cannot create the schema table: %w", err)
	}
	var version *int32
	if err := tx.QueryRow(ctx, `SELECT MAX(version) FROM `+t+`_schema`).Scan(&version); err != nil {
		return fmt.Errorf("cannot read the schema version: %w", err)
	}
	s.version = SchemaVersion
	var stmts []string
	switch {
	case version != nil && *version > SchemaVersion:
		return newerSchema(t, int(*version))
	case version != nil && *version == SchemaVersion:
		return tx.Commit(ctx)
	case version != nil:
		// An older table: it must have its version's columns before it is
		// changed (a table of another shape is refused untouched).
		have, err := postgresColumns(ctx, tx, t)
		if err != nil {
			return err
		}
		if err := checkColumns(t, have, int(*version)); err != nil {
			return err
		}
		if *version < 2 {
			stmts = postgresV2(t)
		}
		if *version < 3 {
			stmts = append(stmts, postgresV3(t)...)
		}
		stmts = append(stmts, postgresV4(t)...)
	default:
		stmts = append(append(append(postgresV1(t), postgresV2(t)...), postgresV3(t)...), postgresV4(t)...)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("cannot create the audit table: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("cannot commit the schema: %w", err)
	}
	return nil
}

// postgresV4 upgrades a version-3 table to version 4: the request and
// response sizes and the number of content blocks of a row (a constant
// default: the catalog changes, no row is rewritten, and older rows read
// 0), and the ledger's range of rows per entry, for a batch written in
// parts. An older ledger entry recorded a whole batch: it gets first_row 0
// and the largest row count.
func postgresV4(t string) []string {
	return []string{
		`ALTER TABLE ` + t + ` ADD COLUMN IF NOT EXISTS request_bytes bigint NOT NULL DEFAULT 0,
			ADD COLUMN IF NOT EXISTS response_bytes bigint NOT NULL DEFAULT 0,
			ADD COLUMN IF NOT EXISTS content_blocks integer NOT NULL DEFAULT 0`,
		`ALTER TABLE ` + t + `_batches ADD COLUMN IF NOT EXISTS first_row integer NOT NULL DEFAULT 0,
			ADD COLUMN IF NOT EXISTS row_count integer NOT NULL DEFAULT ` + fmt.Sprint(maxLegacyRows) + `,
			DROP CONSTRAINT IF EXISTS ` + t + `_batches_pkey,
			ADD PRIMARY KEY (spool, seq, first_row)`,
		`ALTER TABLE ` + t + `_batches ALTER COLUMN row_count DROP DEFAULT`,
		`INSERT INTO ` + t + `_schema (version) VALUES (4)`,
	}
}

// postgresV3 upgrades a version-2 table to version 3: the notes (jsonb)
// and the trace and span ids of a row, and call_id and tool compared byte
// for byte (collation "C"). Adding a column with a constant default changes
// only the catalog: rows written before are not rewritten, and read as
// having none. Changing a collation rewrites no row either, only the
// column's indexes: a btree under the database's default collation (a libc
// locale, even C.UTF-8) compares through strcoll on every insert, and C
// compares bytes, which makes the call_id and (tool, ts) indexes cheaper to
// keep up (BenchmarkPostgresCallIDIndex: ingest with the call_id index went
// from 0.72 to 0.85 of the rate without any, the mean of three runs). Call
// ids and tool names are identifiers: equality is the same in both, and
// only an ORDER BY tool of your own sorts differently (by bytes).
func postgresV3(t string) []string {
	return []string{
		`ALTER TABLE ` + t + ` ADD COLUMN IF NOT EXISTS notes jsonb,
			ADD COLUMN IF NOT EXISTS trace_id text NOT NULL DEFAULT '',
			ADD COLUMN IF NOT EXISTS span_id text NOT NULL DEFAULT '',
			ALTER COLUMN call_id TYPE text COLLATE "C",
			ALTER COLUMN tool TYPE text COLLATE "C"`,
		`INSERT INTO ` + t + `_schema (version) VALUES (3)`,
	}
}

// postgresV2 upgrades a version-1 table to version 2: the ledger of
// batches written from a spool, and a partial index on call_id (rows
// without one, HTTP rows, are left out of it).
func postgresV2(t string) []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + t + `_batches (spool text NOT NULL, seq bigint NOT NULL, PRIMARY KEY (spool, seq))`,
		`CREATE INDEX IF NOT EXISTS ` + t + `_call_id ON ` + t + ` (call_id) WHERE call_id <> ''`,
		`INSERT INTO ` + t + `_schema (version) VALUES (2)`,
	}
}

// postgresV1 creates the version-1 table.
func postgresV1(t string) []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + t + ` (
			id bigint GENERATED ALWAYS AS IDENTITY,
			ts timestamptz NOT NULL,
			kind text NOT NULL,
			call_id text NOT NULL DEFAULT '',
			request_id text NOT NULL DEFAULT '',
			session_id text NOT NULL DEFAULT '',
			transport text NOT NULL DEFAULT '',
			tool text NOT NULL DEFAULT '',
			subject text NOT NULL DEFAULT '',
			outcome text NOT NULL,
			code text NOT NULL DEFAULT '',
			message text NOT NULL DEFAULT '',
			detail jsonb,
			duration_ns bigint NOT NULL,
			client_meta jsonb,
			arguments jsonb,
			method text NOT NULL DEFAULT '',
			path text NOT NULL DEFAULT '',
			status integer NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX IF NOT EXISTS ` + t + `_ts ON ` + t + ` USING brin (ts)`,
		`CREATE INDEX IF NOT EXISTS ` + t + `_tool_ts ON ` + t + ` (tool, ts)`,
		`INSERT INTO ` + t + `_schema (version) VALUES (1)`,
	}
}

// pgRows feeds a batch to COPY.
type pgRows struct {
	batch []audit.Record
	i     int
	vals  []any
	err   error
}

// Next encodes the next row.
func (p *pgRows) Next() bool {
	if p.i >= len(p.batch) || p.err != nil {
		return false
	}
	r := &p.batch[p.i]
	p.i++
	detail, err := jsonText(r.Detail)
	if err != nil {
		p.err = err
		return false
	}
	meta, err := jsonText(r.ClientMeta)
	if err != nil {
		p.err = err
		return false
	}
	if len(p.vals) != len(columns) {
		p.vals = make([]any, len(columns))
	}
	v := p.vals
	v[0] = r.Time
	setPGText(&v[1], pgText(string(r.Kind)))
	setPGText(&v[2], pgText(r.CallID))
	setPGText(&v[3], pgText(r.RequestID))
	setPGText(&v[4], pgText(r.SessionID))
	setPGText(&v[5], pgText(r.Transport))
	setPGText(&v[6], pgTool(r.Tool))
	setPGText(&v[7], pgText(r.Subject))
	setPGText(&v[8], pgText(string(r.Outcome)))
	setPGText(&v[9], pgText(string(r.Code)))
	setPGText(&v[10], pgText(r.Message))
	v[11] = jsonb(pgJSON(detail))
	v[12] = int64(r.Duration)
	v[13] = jsonb(pgJSON(meta))
	v[14] = jsonb(pgJSON(rawJSON(r.Arguments)))
	setPGText(&v[15], pgText(r.Method))
	setPGText(&v[16], pgText(r.Path))
	v[17] = int32(r.Status)
	v[18] = jsonb(pgJSON(notesText(r.Notes)))
	setPGText(&v[19], pgText(r.TraceID))
	setPGText(&v[20], pgText(r.SpanID))
	v[21] = int64(r.RequestBytes)
	v[22] = int64(r.ResponseBytes)
	v[23] = int32(min(max(r.ContentBlocks, 0), maxLegacyRows))
	return true
}

// setPGText sets a text value, keeping the previous row's boxed value
// when it is the same string (kind, session, transport, tool, subject and
// outcome mostly are): boxing a string into an interface allocates, and
// those allocations were most of COPY's per-row client cost after pgx's own
// encoding (see bench's BenchmarkCeiling/postgres).
func setPGText(dst *any, s string) {
	if prev, ok := (*dst).(string); ok && prev == s {
		return
	}
	*dst = s
}

// Values returns the current row.
func (p *pgRows) Values() ([]any, error) { return p.vals, nil }

// Err returns the encoding error, if any.
func (p *pgRows) Err() error { return p.err }

// jsonb passes JSON text to a jsonb column, or NULL.
func jsonb(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func (s *Store) writePostgresOnce(ctx context.Context, id *audit.BatchID, batch []audit.Record) error {
	if id == nil {
		// COPY is one statement: the batch is written whole or not at all.
		return s.copyPostgres(ctx, nil, batch)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("sqlstore: postgres: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// One round trip records the range unless the ledger has this batch
	// already, and returns what it has: usually nothing.
	rows, err := tx.Query(ctx, `WITH prev AS (SELECT first_row, row_count FROM `+s.table+`_batches WHERE spool = $1 AND seq = $2),
		ins AS (INSERT INTO `+s.table+`_batches (spool, seq, first_row, row_count)
			SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM prev) RETURNING 1)
		SELECT first_row, row_count FROM prev`, id.Spool, int64(id.Seq), int32(id.First), int32(len(batch)))
	if err != nil {
		return fmt.Errorf("sqlstore: postgres: ledger: %w", err)
	}
	var prev []span
	for rows.Next() {
		var first, count int32
		if err := rows.Scan(&first, &count); err != nil {
			rows.Close()
			return fmt.Errorf("sqlstore: postgres: ledger: %w", err)
		}
		prev = append(prev, span{int64(first), int64(count)})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlstore: postgres: ledger: %w", err)
	}
	if len(prev) > 0 {
		// Parts of the batch were written before (it was split to find a
		// refused row, or a part was written and the whole replayed).
		n := len(batch)
		batch = uncovered(prev, id.First, batch)
		if len(batch) == 0 {
			return nil // written before
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+s.table+`_batches (spool, seq, first_row, row_count) VALUES ($1, $2, $3, $4)
			ON CONFLICT (spool, seq, first_row) DO UPDATE SET row_count = GREATEST(`+s.table+`_batches.row_count, EXCLUDED.row_count)`,
			id.Spool, int64(id.Seq), int32(id.First), int32(n)); err != nil {
			return fmt.Errorf("sqlstore: postgres: ledger: %w", err)
		}
	}
	if err := s.copyPostgres(ctx, tx, batch); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("sqlstore: postgres: commit: %w", err)
	}
	return nil
}

// copyPostgres writes batch with one COPY, on a connection of the pool
// or in tx when it is not nil. An error for the data of a row wraps
// [audit.ErrRowRefused] (see [refusedPG]).
func (s *Store) copyPostgres(ctx context.Context, tx pgx.Tx, batch []audit.Record) error {
	var n int64
	var err error
	switch {
	case !s.binaryCopy && tx != nil:
		n, err = tx.CopyFrom(ctx, pgx.Identifier{s.table}, columns, &pgRows{batch: batch})
	case !s.binaryCopy:
		n, err = s.pool.CopyFrom(ctx, pgx.Identifier{s.table}, columns, &pgRows{batch: batch})
	case tx != nil:
		n, err = s.copyBinary(ctx, tx.Conn().PgConn(), batch)
	default:
		var c *pgxpool.Conn
		if c, err = s.pool.Acquire(ctx); err == nil {
			n, err = s.copyBinary(ctx, c.Conn().PgConn(), batch)
			c.Release()
		}
	}
	if err != nil {
		return fmt.Errorf("sqlstore: postgres: copy: %w", refusedPG(err))
	}
	if int(n) != len(batch) {
		return fmt.Errorf("sqlstore: postgres: copy wrote %d rows of %d", n, len(batch))
	}
	return nil
}

// refusedPG marks err with [audit.ErrRowRefused] when PostgreSQL refused a
// row of a COPY for its data: SQLSTATE class 22 (data exception: a number
// out of numeric's range, text or JSON it will not take, a string too long
// for its type), 23 (an integrity constraint: a CHECK, NOT NULL or UNIQUE
// of the user's own on the table) or 54 (a program limit: an index entry
// over the page's third, a jsonb too large). Every other error (the
// connection, a shutdown, a full disk, a permission, a timeout) is an
// outage, and is returned as it is.
func refusedPG(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) != 5 {
		return err
	}
	switch pe.Code[:2] {
	case "22", "23", "54":
		return fmt.Errorf("%w: %w", audit.ErrRowRefused, err)
	}
	return err
}

// queryPostgres finds the newest rows without reading the whole table when
// it can. Only the BRIN index on ts can narrow a query without a tool, and
// only to a time range, so a query without Since first reads the last hour
// before its end (Until, or now; rows stamped later, by a server whose clock
// is ahead, belong to that slice), then the rest of the last day, and stops
// as soon as it has Limit rows: every older row is older than all of them.
// A CallID query uses the partial index on call_id. Otherwise it reads the whole table as one query:
// a BRIN scan of a long range costs more than reading everything (measured:
// 3/4 of 2,000,000 rows, 400 ms against 165 ms), so the slices stay short.
func (s *Store) queryPostgres(ctx context.Context, q Query) ([]audit.Record, error) {
	if !q.Since.IsZero() || q.Tool != "" || q.CallID != "" {
		return s.queryPostgresOnce(ctx, q) // an index narrows it already
	}
	end := q.Until
	if end.IsZero() {
		end = time.Now()
	}
	limit := q.limit()
	var out []audit.Record
	slice := q
	for _, w := range [...]time.Duration{time.Hour, 24 * time.Hour} {
		slice.Since = end.Add(-w)
		slice.Limit = limit - len(out)
		rows, err := s.queryPostgresOnce(ctx, slice)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(out) >= limit {
			return out, nil
		}
		slice.Until = slice.Since
	}
	return s.queryPostgresOnce(ctx, q)
}

func (s *Store) queryPostgresOnce(ctx context.Context, q Query) ([]audit.Record, error) {
	var out []audit.Record
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.queryPostgresTx(ctx, tx, q)
		return err
	})
	return out, err
}

func (s *Store) queryPostgresTx(ctx context.Context, tx pgx.Tx, q Query) ([]audit.Record, error) {
	where, args := q.where(func(n int) string { return fmt.Sprintf("$%d", n) }, func(t time.Time) any { return t })
	rows, err := tx.Query(ctx, "SELECT "+s.selectColumnsPG()+" FROM "+s.table+where+
		" ORDER BY ts DESC, id DESC LIMIT "+fmt.Sprint(q.limit()), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: query: %w", err)
	}
	defer rows.Close()
	var out []audit.Record
	for rows.Next() {
		var sc scanned
		r := &sc.rec
		var status int32
		if err := rows.Scan(&r.Time, &sc.kind, &r.CallID, &r.RequestID, &r.SessionID, &r.Transport, &r.Tool, &r.Subject,
			&sc.outcome, &sc.code, &r.Message, &sc.detail, &sc.durNS, &sc.meta, &sc.arguments, &r.Method, &r.Path, &status,
			&sc.notes, &r.TraceID, &r.SpanID, &sc.reqBytes, &sc.respBytes, &sc.blocks); err != nil {
			return nil, fmt.Errorf("sqlstore: postgres: scan: %w", err)
		}
		sc.status = int64(status)
		rec, err := sc.finish()
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: query: %w", err)
	}
	return out, nil
}

// selectColumnsPG are the columns Query reads, the JSON ones as text; a
// table older than version 3 has no notes, trace or span ids.
func (s *Store) selectColumnsPG() string {
	const v2 = "ts, kind, call_id, request_id, session_id, transport, tool, subject, outcome, code, message, detail::text, duration_ns, client_meta::text, arguments::text, method, path, status"
	switch {
	case s.version < 3:
		return v2 + ", NULL::text, '', '', 0::bigint, 0::bigint, 0::bigint"
	case s.version == 3:
		return v2 + ", notes::text, trace_id, span_id, 0::bigint, 0::bigint, 0::bigint"
	}
	return v2 + ", notes::text, trace_id, span_id, request_bytes, response_bytes, content_blocks::bigint"
}

var errClosed = errors.New("sqlstore: the store is closed")
