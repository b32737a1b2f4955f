package audit

import (
	"context"
	"log/slog"
)

// Sink writes batches of rows somewhere durable: a log ([SlogSink]), a
// database (package audit/sqlstore), or anything with a WriteBatch method.
//
// WriteBatch writes every row of batch or returns an error, in which case
// the caller may send the whole batch again (a sink should be idempotent
// per batch or transactional, as the SQL store is). It must not keep batch
// or anything it references after it returns. It is called from one
// goroutine at a time by [Async].
type Sink interface {
	WriteBatch(ctx context.Context, batch []Record) error
}

// SinkFunc lets a function be a [Sink].
type SinkFunc func(ctx context.Context, batch []Record) error

// WriteBatch calls f(ctx, batch).
func (f SinkFunc) WriteBatch(ctx context.Context, batch []Record) error { return f(ctx, batch) }

// Emitter receives one row per call from [Interceptor] and [HTTP]. Emit runs
// synchronously in the call's goroutine, before the result goes back to the
// client, so it must be fast: [*Async] only enqueues. Emit cannot fail the
// call: an emitter handles its own errors. r is a copy the emitter may keep.
type Emitter interface {
	Emit(ctx context.Context, r Record)
}

// EmitterFunc lets a function be an [Emitter].
type EmitterFunc func(ctx context.Context, r Record)

// Emit calls f(ctx, r).
func (f EmitterFunc) Emit(ctx context.Context, r Record) { f(ctx, r) }

// Direct returns an [Emitter] that writes each row synchronously to s, as a
// batch of one, with a context that is not cancelled when the call is (the
// row of a cancelled call must still be written). A failed write is
// reported to logger (slog.Default() when nil) with the row. Use it for
// fast sinks such as a [SlogSink]; put slow ones behind [Async].
func Direct(s Sink, logger *slog.Logger) Emitter {
	return EmitterFunc(func(ctx context.Context, r Record) {
		batch := [1]Record{r}
		if err := s.WriteBatch(context.WithoutCancel(ctx), batch[:]); err != nil {
			l := logger
			if l == nil {
				l = slog.Default()
			}
			l.ErrorContext(ctx, "toolmw/audit: sink failed; row logged here instead", "error", err, "row", r)
		}
	})
}
