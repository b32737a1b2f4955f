// Package serve is what a command that serves MCP tool calls with toolmw
// needs around its server, written once for the demo server
// (examples/server) and toolmw-proxy (cmd/toolmw-proxy), and for yours:
//
//   - the audit log: [AddAuditFlags] registers the audit flags every such
//     command takes, with one meaning (-audit-db, -audit-postgres,
//     -audit-table, -audit-spool, -audit-durability, -otlp-logs-endpoint);
//     [OpenAudit] opens the store they name (SQLite by default, PostgreSQL
//     with a DSN), the local spool that absorbs the store's outages and the
//     asynchronous writer in front of them, and says what went wrong in
//     one line that names the setting to change;
//   - the chain: [Chain] is the recommended chain (the audit row outermost,
//     diagnostics, Normalize, Recover), to which a command appends its
//     guards and deadlines; [Diagnostics] logs the raw causes for the
//     operator;
//   - the HTTP side: [Handler] is go-sdk's streamable HTTP handler at /mcp
//     and HTTP+SSE at /sse behind httpmw.Recover, a request id, the HTTP
//     audit row, a body limit, write deadlines fitted to MCP and a cap on
//     open sessions, with optional authentication;
//   - shutdown: [InFlight] counts the calls in flight and cancels those
//     that outlive the grace period.
//
// # Durability
//
// -audit-durability (AuditConfig.Durability) says when a call is
// answered, and so what a crash can lose:
//
//   - memory (the default): once its row is queued in memory. A clean stop
//     (SIGINT, SIGTERM, then the command's Close) writes every row. SIGKILL,
//     a crash or an out-of-memory kill loses the rows still queued (at most
//     the queue's 8,192, and the batch being written); a power loss also
//     the spooled rows of the last second (the spool is fsync'd every
//     second). A call never waits for the disk.
//   - disk: once its row is fsync'd in the spool (the calls queued together
//     share one fsync). SIGKILL and a crash lose no answered call's row;
//     nor does a power loss, on a disk that honours fsync. Each call waits
//     for an fsync.
//
// The demo's measurements of both are in docs/serving.md.
//
// # Layer
//
// serve is the top of toolmw's layering, beside examples/ and cmd/: it
// imports the go-sdk adapter (toolctx/mcpsdk), audit/sqlstore (and so the
// SQLite and PostgreSQL drivers), audit/otlplog and middleware/otelmw, and
// nothing in the library imports it. A program that wants less builds its
// own from the parts this package names.
package serve
