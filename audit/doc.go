// Package audit writes one row per tool call (and, with [HTTP], per HTTP
// request) to a log or a database, without losing one and without letting a
// raw error reach the caller.
//
// # The row
//
// A [Record] has the time, kind, call id, request id, session id, transport,
// tool, the caller's subject (never a credential), an [Outcome] from a
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
// Arguments are recorded only through a [Redactor] the user passes with
// [WithArguments]; the client's _meta is recorded as untrusted, without the
// protocol's own "io.modelcontextprotocol/" keys.
//
// # Wiring
//
//	store, err := sqlstore.OpenSQLite(ctx, "/var/lib/app/audit.db", sqlstore.Options{})
//	if err != nil { return err }
//	w := audit.NewAsync(store, audit.AsyncConfig{Policy: audit.Drop})
//	defer store.Close()
//	defer w.Close(context.Background()) // runs first: flushes into the store
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
// and interval from one goroutine, with retries, backoff and a fallback sink,
// and a choice of [Block] or [Drop] when the queue is full. Emit does not
// allocate. [SlogSink] writes rows as slog records with typed attributes,
// through any slog.Handler (compose several with github.com/samber/slog-multi;
// do not use its Pool, which races at v1.7.1). The SQL store lives in
// package audit/sqlstore, so importing audit builds no database driver.
//
// A sink that fails never fails the tool call: the row is retried, then goes
// to the fallback sink, or, under Drop with a full queue, is counted as
// dropped; the counters ([Async.Stats]) are logged on Close.
package audit
