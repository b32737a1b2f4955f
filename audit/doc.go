// Package audit writes one row per tool call (and, with [HTTP], per HTTP
// request) to a log or a database, without losing one and without letting
// a raw error reach the caller. See docs/audit.md (sinks, the spool, the
// query tool) and docs/serving.md (durability).
//
// A [Record] holds the raw message (the cause's server-side text) only
// where the caller's message was scrubbed, and the public message, what the
// caller was told, everywhere else; a stack is never written. Arguments are
// recorded only through a redactor ([WithArguments]).
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
// [*Async] is the usual [Emitter]: a bounded queue in front of any [Sink],
// written in batches; a tool call never waits for the sink. With a [Spool]
// (recommended) a batch the sink cannot take waits on local disk and is
// replayed, exactly once into an [OnceSink] such as the SQL store
// (package audit/sqlstore, so that importing audit builds no database
// driver). [SlogSink] writes rows as slog records.
package audit
