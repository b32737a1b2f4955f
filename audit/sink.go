package audit

import (
	"context"
	"log/slog"
	"sync"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
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

// DirectConfig configures [Direct]. The zero value gives the defaults.
type DirectConfig struct {
	// FallbackLogger is where a row goes, with the call id and the error
	// or panic value, when the sink fails or panics: the same knob as
	// [AsyncConfig.FallbackLogger]. Default slog.Default().
	FallbackLogger *slog.Logger
}

// Direct returns an [Emitter] that writes each row synchronously to s, as a
// batch of one, cut to [DefaultLimits] as [Async] cuts its rows, with a
// context that is not cancelled when the call is (the row of a cancelled
// call must still be written). A write that fails or panics does not lose
// the row: it goes to opts.FallbackLogger. Use it for fast sinks such as a
// [SlogSink]; put slow ones behind [Async]. A nil s
// panics, at construction (see package middleware's doc on construction
// mistakes).
func Direct(s Sink, opts DirectConfig) Emitter {
	if s == nil {
		panic("audit.Direct: the sink is nil")
	}
	limits := DefaultLimits()
	logger := opts.FallbackLogger
	// The batch of one a row is written as: the sink takes a slice, whose
	// array the call would otherwise allocate for every row (a Sink keeps
	// nothing of a batch once WriteBatch returns).
	batches := sync.Pool{New: func() any { return new([1]Record) }}
	return EmitterFunc(func(ctx context.Context, r Record) {
		limits.apply(&r)
		batch := batches.Get().(*[1]Record)
		batch[0] = r
		err, panicked := writeOne(ctx, s, batch[:])
		if !panicked { // a sink that panicked may hold on to it
			batch[0] = Record{}
			batches.Put(batch)
		}
		if err == nil {
			return
		}
		l := logger
		if l == nil {
			l = slog.Default()
		}
		msg := "toolmw/audit: sink failed; row logged here instead"
		if panicked {
			msg = "toolmw/audit: sink panicked; row logged here instead"
		}
		l.ErrorContext(ctx, msg, "error", errs.Describe(err), "call_id", r.CallID, "row", r)
	})
}

// writeOne writes batch, a row's batch of one, to s, turning a panic of the
// sink into an error. (A sink that calls runtime.Goexit is not stopped; the
// interceptor logs the row it was writing.)
func writeOne(ctx context.Context, s Sink, batch []Record) (err error, panicked bool) {
	safecall.Call(func() { err = s.WriteBatch(context.WithoutCancel(ctx), batch) }, func(f safecall.Fault) {
		if !f.Goexit {
			err, panicked = errs.NewPanicError(f.Value), true
		}
	})
	return err, panicked
}
