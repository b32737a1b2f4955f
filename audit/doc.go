// Package audit writes one row per tool call (and, with [HTTP], per HTTP
// request) to a log or a database, without losing one and without letting a
// raw error reach the caller.
//
// # The row
//
// A [Record] has the time, kind, call id, request id, session id, transport,
// tool, the caller's subject (never a credential), a [RowOutcome] from a
// small closed set (ok, error, rejected, canceled, timeout, panic), the
// public error code, a message, the public error detail and the duration;
// HTTP rows add method, path and status.
//
// The message rule is toolmw's one rule seen from the server side: the audit
// row may name the cause, the caller may not. The row holds the raw message
// (the cause's server-side text, [errs.Describe], which never panics) only
// where the caller's message was scrubbed, that is an internal error with a
// raw cause, a panic, or a raw error returned after the call was cancelled
// or ran past its deadline (the caller is told "canceled" or "timeout"; the
// row keeps the outcome and names the cause), and a public error returned
// after middleware.Timeout's deadline (the row names both); everywhere else
// it holds the public message, which is what the caller was told, so row
// and response agree. A stack is never written (a panic's row holds its
// value).
// Arguments are recorded only through a [middleware.ArgumentsRedactor] the
// user passes with [WithArguments]; the client's _meta is recorded as untrusted, without the
// protocol's own "io.modelcontextprotocol/" keys.
//
// # Wiring
//
//	store, err := sqlstore.OpenSQLite(ctx, "/var/lib/app/audit.db", sqlstore.Config{})
//	if err != nil { return err }
//	spool, err := audit.OpenSpool("/var/lib/app/audit.spool", audit.SpoolConfig{})
//	if err != nil { return err }
//	w := audit.NewAsync(store, audit.AsyncConfig{Spool: spool})
//	defer store.Close()
//	defer w.Close(ctx) // runs first: flushes into the store, or leaves the rest in the spool
//	chain := middleware.New(
//		audit.Interceptor(w),          // outermost: sees panics, timeouts, guards
//		middleware.Diagnostics(report),
//		middleware.Normalize(errs.Normalizer{}),
//		middleware.Recover,
//	)
//
// # Sinks
//
// [Interceptor] and [HTTP] hand rows to an [Emitter]. [*Async] is the usual
// one: a bounded queue in front of any [Sink], written in batches by size
// and interval from its own goroutines; rows are cut to [Limits] first.
// With a [Spool] (recommended), a batch the sink fails to take, or that is
// ready while the sink is busy, goes to checksummed segment files on local
// disk and is replayed into the sink, oldest first, when it answers again:
// exactly once into an [OnceSink] such as the SQL store, whose ledger of
// batch ids is written in the same transaction as the rows. [SlogSink]
// writes rows as slog records with typed attributes, through any
// slog.Handler (compose several with github.com/samber/slog-multi; do not
// use its Pool, which races at v1.7.1). The SQL store lives in package
// audit/sqlstore, so importing audit builds no database driver.
//
// A nil emitter or sink given to a constructor ([Interceptor], [Direct],
// [NewAsync]) is a construction mistake and panics at once, by the policy
// package middleware documents; a nil slog.Handler for [NewSlogSink] is the
// documented default, slog.Default()'s.
//
// A sink that fails never fails or delays the tool call. By default
// ([Drop], [DurabilityMemory]) Emit never waits: a row that finds the queue
// full, or (with a spool) the spool full, is counted as dropped and
// logged. [Block] waits at most [AsyncConfig.BlockTimeout] for room;
// [DurabilityDisk] waits until the row is fsync'd in the spool (one fsync
// for the calls queued together). Without a spool a failed batch is
// retried and then goes to the fallback sink; with one, the fallback
// receives only what the spool itself failed to take. The counters
// ([Async.Stats]) are logged on Close.
package audit
