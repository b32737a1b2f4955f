package audit

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// Option configures [Interceptor].
type Option func(*config)

type config struct {
	redact   middleware.ArgumentsRedactor
	noMeta   bool
	mwOpts   []middleware.Option
	fallback *slog.Logger

	mistake string // the first option given a value it cannot use
}

func (c *config) fail(msg string) {
	if c.mistake == "" {
		c.mistake = msg
	}
}

// WithArguments records the call's arguments as redact returns them. Without
// it no argument is ever recorded. A nil redact is a construction mistake:
// leave the option out to record none.
func WithArguments(redact middleware.ArgumentsRedactor) Option {
	return func(c *config) {
		if redact == nil {
			c.fail("WithArguments(nil): pass a redactor, or leave the option out to record no arguments")
			return
		}
		c.redact = redact
	}
}

// WithoutClientMeta leaves the client's _meta out of rows. By default it is
// recorded (untrusted, minus the protocol's own keys, cut to
// [Limits.ClientMeta] by [Async]), which costs a copy of the map on calls
// whose _meta has keys of its own.
func WithoutClientMeta() Option {
	return func(c *config) { c.noMeta = true }
}

// WithNormalizer sets the rules used to classify results when Normalize
// with a mapping is not inside the interceptor; use the chain's normalizer.
// See [middleware.WithNormalizer].
func WithNormalizer(n errs.Normalizer) Option {
	return func(c *config) { c.mwOpts = append(c.mwOpts, middleware.WithNormalizer(n)) }
}

// WithFallbackLogger sets where a row goes that the emitter could not take
// (it panicked), and where the interceptor's own faults are reported, each
// with the call id: the same knob as [middleware.WithFallbackLogger].
// Default: slog.Default() at the time of the report. A nil l is a
// construction mistake: leave the option out for the default.
func WithFallbackLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.fail("WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()")
			return
		}
		c.fallback = l
		c.mwOpts = append(c.mwOpts, middleware.WithFallbackLogger(l))
	}
}

// Interceptor returns the audit interceptor: one row per tool call, emitted
// to e, including calls that panicked, were cancelled, timed out or were
// rejected by a guard inside it. It is built on [middleware.After], so it
// writes the same row whether or not [middleware.Normalize] is in the
// chain. Place it outermost, outside [middleware.Recover]:
//
//	w := audit.NewAsync(store, audit.AsyncConfig{})
//	chain := middleware.New(audit.Interceptor(w), middleware.Diagnostics(report), middleware.Recover)
//
// A nil e, or an option given a value it cannot use, panics: a
// construction mistake (see package middleware's doc, "Knobs"). A nil
// option is skipped.
//
// The row's message is the raw message (the cause's server-side text, as
// [errs.Describe] renders it; for a panic the value, never the stack) only
// where the caller's message was scrubbed, and the public message
// everywhere else. Every call gets its row, whatever the cause's methods
// do: a cause whose Error panics is described by a placeholder naming its
// type. An emitter that panics does not lose the row: it is written to the
// fallback logger ([WithFallbackLogger]) with the call id. Building and
// emitting the row of a successful call whose _meta has no keys of the
// client's own allocates nothing; the client's keys are copied on the
// call, so that a queued row holds no reference to the call.
func Interceptor(e Emitter, opts ...Option) toolctx.Middleware {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if e == nil {
		panic("audit.Interceptor: the emitter is nil")
	}
	if c.mistake != "" {
		panic("audit.Interceptor: " + c.mistake)
	}
	hook := func(ctx context.Context, info middleware.CallInfo) {
		// What may take its time (an Arguments that encodes itself, the
		// redactor, the copy of _meta) runs first: a row written in place
		// (below) holds a slot of the queue from its reservation to its
		// publication, and the rows queued after it wait for it.
		reqBytes := 0
		if info.Request != nil {
			reqBytes = info.Request.Arguments.Len()
		}
		var args json.RawMessage
		if c.redact != nil && reqBytes > 0 {
			args = c.redacted(ctx, info.Request)
		}
		var meta map[string]any
		if !c.noMeta {
			// A copy without the reserved keys, nil without allocating: the
			// row holds no reference to the call (Async bounds its size).
			meta = info.Details.Meta()
		}
		if a, ok := e.(*Async); ok && meta == nil && info.Outcome.Public.Detail == nil {
			// The row is built in its slot of the queue: no copy of it on
			// the stack, none into the queue. Its maps (none here) are what
			// cutting to the limits could fail on.
			if r, slot := a.reserve(); r != nil {
				defer a.publish(slot) // a fault in between still frees the queue
				toolRow(ctx, r, &info, reqBytes)
				r.Arguments = args
				a.limits.apply(r)
				a.ownArguments(r)
				return
			}
		}
		var r Record
		toolRow(ctx, &r, &info, reqBytes)
		r.ClientMeta, r.Arguments = meta, args
		c.emit(ctx, e, &r)
	}
	return middleware.After(hook, c.mwOpts...)
}

// toolRow fills r, a zero Record or a slot of the queue, with the row of
// the call info describes, reqBytes the size of its arguments. It reads
// fields, ctx's trace and the result's sizes, all quickly; a fault in it
// (a context whose Value panics) leaves the row as it is, published (see
// Interceptor).
func toolRow(ctx context.Context, r *Record, info *middleware.CallInfo, reqBytes int) {
	d := info.Details
	r.Time = info.Start
	r.Kind = KindTool
	r.CallID = d.CallID()
	r.RequestID = d.RequestID()
	r.SessionID = d.SessionID()
	r.Transport = string(d.Transport())
	r.Tool = d.Tool()
	r.Subject = d.Subject()
	r.TaskID = d.TaskID()
	r.Outcome = OutcomeOK
	r.Duration = info.Duration
	r.Notes = info.Result.Notes()
	r.RequestBytes = reqBytes
	r.ResponseBytes, r.ContentBlocks = responseSize(info.Result, &info.Outcome)
	if info.Outcome.InputRequired {
		r.Outcome = OutcomeInputRequired
	}
	if o := &info.Outcome; o.Failed {
		cause := info.Cause()
		r.Code = o.Public.Code
		r.Outcome = outcomeOf(o.Public.Code, o.Scrubbed, cause)
		if o.Scrubbed && cause != nil {
			r.Message = errs.Describe(cause) // a *errs.PanicError's text has the value, never the stack
		} else {
			r.Message = o.Public.Message
			r.Detail = o.Public.Detail
		}
	}
	// Compared where it lands, not copied first: the zero TraceRef is
	// stored as two overlapping 16-byte words, and a copy's load of the
	// first could not be forwarded from them (8 ns a call on this machine's
	// AMD EPYC). A traced call looks it up again.
	if toolctx.TraceRefFrom(ctx) != (toolctx.TraceRef{}) {
		r.TraceID, r.SpanID = toolctx.TraceRefFrom(ctx).HexIDs()
	}
}

// redacted is c.redact's copy of req's arguments; a redactor that panics
// records none, and the row is still written.
func (c *config) redacted(ctx context.Context, req *toolctx.Request) (args json.RawMessage) {
	safecall.Reporter{Logger: c.fallback, Describe: errs.Describe}.Call(ctx,
		"toolmw/audit: the redactor panicked; the row is written without arguments",
		func() { args = c.redact(req.Tool, req.Arguments.JSON()) },
		func() []slog.Attr { return []slog.Attr{slog.String("call_id", req.CallID)} })
	return args
}

// emit hands r to e. An emitter that panics (or calls runtime.Goexit) does
// not lose the row: it is written to the fallback logger, with the call id.
func (c *config) emit(ctx context.Context, e Emitter, r *Record) {
	emitSafely(ctx, c.fallback, e, r)
}

// emitSafely hands r to e; when e panics (or calls runtime.Goexit), the
// row goes to l (nil: slog.Default()), cut to [DefaultLimits], with the
// call id and the panic. An *Async gets r by pointer: the row is copied
// once, into its queue, not first into Emit's argument.
func emitSafely(ctx context.Context, l *slog.Logger, e Emitter, r *Record) {
	safecall.Call(func() {
		if a, ok := e.(*Async); ok {
			a.emit(ctx, r)
			return
		}
		e.Emit(ctx, *r)
	}, func(f safecall.Fault) {
		row := *r
		DefaultLimits().Apply(&row)
		safecall.Reporter{Logger: l, Describe: errs.Describe}.Report(ctx,
			"toolmw/audit: the emitter panicked; row logged here instead", f,
			slog.String("call_id", r.CallID), slog.Any("row", row))
	})
}
