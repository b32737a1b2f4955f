// Package sqlstore is the SQL audit store: an [audit.Sink] that writes
// [audit.Record] rows to SQLite (modernc.org/sqlite, pure Go, driver name
// "sqlite": the embedded default, a file path is all it needs) or
// PostgreSQL (github.com/jackc/pgx/v5, for a fleet of servers sharing one
// log), and [Store.Query], which reads them back for an operator.
//
// Both databases are in this one package: importing it builds both drivers,
// and importing package audit builds neither.
//
// The table ([Config.Table], default "toolmw_audit") is created on open,
// with an index on time (SQLite) or on time and on (tool, time)
// (PostgreSQL) and a partial index on call_id (PostgreSQL), and its layout version is
// kept in "<table>_schema" ([SchemaVersion]). Opening is idempotent; a
// writer upgrades a table of an older version, a reader reads it as it is;
// a table written by a newer toolmw is refused with [ErrNewerSchema]. SQLite runs in WAL mode
// with synchronous=NORMAL, checkpointing every 8,000 pages; PostgreSQL takes an advisory lock while it
// creates the table, so replicas may start together.
//
// Each batch is one transaction: SQLite uses a prepared one-row INSERT with
// every value bound, executed once per row on the driver's connection;
// PostgreSQL one COPY. Put the store behind [audit.NewAsync] with an
// [audit.Spool]: a batch the database fails to take waits in the spool and
// is replayed when it answers again, and a tool call never waits for the
// database. The store is an [audit.OnceSink]: [Store.WriteBatchOnce]
// records the batch's id in the ledger table "<table>_batches" in the same
// transaction as the rows, so that a replayed batch is written exactly
// once; [Store.ForgetBatches] trims the ledger to what the spool may still
// send.
//
// Columns: id, ts (SQLite: Unix nanoseconds; PostgreSQL: timestamptz), kind,
// call_id, request_id, session_id, transport, tool, subject, outcome, code,
// message, detail (JSON), duration_ns, client_meta (JSON, untrusted),
// arguments (JSON, only with a redactor), method, path, status, notes (JSON:
// an array of {"key", "value"} objects, in the order noted; see
// [audit.Record.Notes]), trace_id, span_id, request_bytes, response_bytes,
// content_blocks (see [audit.Record.ResponseBytes] for what is counted).
//
// A row the database refuses for its data fails its batch's transaction;
// the error then wraps [audit.ErrRowRefused], and [audit.Async] splits the
// batch to find the row, writes the others and sends it to the fallback
// sink. PostgreSQL: SQLSTATE class 22 (a JSON number outside numeric's
// range, 1e999999 in recorded arguments, say), 23 (a constraint of your own
// on the table) and 54 (an index entry over the btree's limit: a call id
// of kilobytes when [audit.Limits] are off). SQLite takes any text and JSON
// in its TEXT columns; it refuses a row only with SQLITE_TOOBIG (a value
// over SQLITE_LIMIT_LENGTH), SQLITE_CONSTRAINT (a CHECK or trigger of your
// own) or SQLITE_MISMATCH. Anything else (a lost connection, a shutdown, a
// full disk, a permission) is an outage: the batch is retried or spooled
// whole. The ledger records the range of rows each write took
// ([audit.BatchID.First]), so a batch written in parts is still written
// once.
//
// SQLite stores every value byte for byte. PostgreSQL refuses NUL bytes and
// invalid UTF-8 in text, and \u0000 and lone UTF-16 surrogate escapes
// ("\ud800") in jsonb, and one such value would fail a whole COPY; rows
// carry untrusted text, so the PostgreSQL writer replaces them with U+FFFD
// (in JSON, one per invalid byte and per lone surrogate, which is how
// encoding/json reads them) and cuts the indexed tool column at 1,024 bytes
// (only a call to an unknown tool can have a longer name).
//
// Indexes: SQLite has a btree on ts. PostgreSQL, where a fleet appends to
// one table, has a BRIN index on ts (rows arrive in time order, and BRIN
// costs next to nothing to maintain), a btree on (tool, ts) and a partial
// btree on call_id; call_id and tool have the collation "C" (compared byte
// for byte, which makes those btrees the cheapest to keep up: see
// BenchmarkPostgresCallIDIndex); id is
// generated but not indexed. A CallID query is answered from the call_id
// index, however old the call. A query with a tool or a time range (Since)
// uses an index. On PostgreSQL, one with neither reads the last hour, then
// the rest of the last day, through the BRIN index, and reads the whole
// table only when those hold fewer rows than it asks for (the newest 100 of
// 2,000,000 rows over 30 days: about 600 ms from the whole table, a few ms
// from the last hour; see BenchmarkQueryPostgres).
package sqlstore
