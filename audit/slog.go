package audit

import (
	"context"
	"errors"
	"log/slog"
)

// SlogMessage is the message of every record a [SlogSink] writes.
const SlogMessage = "toolmw audit"

// SlogSink writes each row as one slog record, message [SlogMessage], at
// the row's level ([Record.Level]), with the row's time as the record's time
// and its other fields as typed top-level attributes ([Record.Attrs]). Any slog.Handler will do, including
// github.com/samber/slog-multi's Fanout, Failover and RecoverHandlerError
// (see the package example).
//
// It is both a [Sink] (behind [Async], or as an Async's fallback) and an
// [Emitter] (synchronous, for handlers that are fast).
type SlogSink struct {
	h slog.Handler
}

// NewSlogSink returns a sink that writes to h. A nil h means
// slog.Default().Handler(), read when each row is written.
func NewSlogSink(h slog.Handler) *SlogSink { return &SlogSink{h: h} }

func (s *SlogSink) handler() slog.Handler {
	if s.h != nil {
		return s.h
	}
	return slog.Default().Handler()
}

// WriteBatch writes every row of batch and returns the handler's errors,
// joined. A row whose level the handler does not enable is skipped.
func (s *SlogSink) WriteBatch(ctx context.Context, batch []Record) error {
	h := s.handler()
	var errsOut []error
	for i := range batch {
		if err := s.write(ctx, h, &batch[i]); err != nil {
			errsOut = append(errsOut, err)
		}
	}
	return errors.Join(errsOut...)
}

// Emit writes r, cut to [DefaultLimits] as [Async] and [Direct] cut their
// rows (WriteBatch writes the rows it is given: those of Async and Direct
// are cut already); an error of the handler is dropped (wrap the handler with
// slog-multi's RecoverHandlerError to see it, or use [Direct]).
func (s *SlogSink) Emit(ctx context.Context, r Record) {
	DefaultLimits().Apply(&r)
	_ = s.write(ctx, s.handler(), &r)
}

func (s *SlogSink) write(ctx context.Context, h slog.Handler, r *Record) error {
	lvl := r.Level()
	if !h.Enabled(ctx, lvl) {
		return nil
	}
	rec := slog.NewRecord(r.Time, lvl, SlogMessage, 0)
	var buf [maxAttrs]slog.Attr
	rec.AddAttrs(r.appendAttrs(buf[:0], false)...) // the record's own time is the row's
	return h.Handle(ctx, rec)
}
