package adapter

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/contain"
	"github.com/toolmw/toolmw/internal/notifykey"
	"github.com/toolmw/toolmw/toolctx"
)

// Codec is an adapter's half of a [Call]: what its SDK sends.
type Codec[W any] interface {
	// Encode returns what the SDK sends for the chain's result res (as the
	// chain returned it: not yet normalized; nil is a failure), written
	// with public fields only, or why the SDK cannot send it (it does not
	// encode, it fails the tool's output schema). It must not change res.
	// It may be called more than once, concurrently, for different
	// results; a panic in it (normalizing calls the cause's methods, and
	// encoding a user's MarshalJSON) is a reason the result cannot be
	// sent.
	Encode(ctx context.Context, res *toolctx.CallResult) (W, error)
	// Failure returns the content-free failure that carries only pub,
	// built from pub alone: it must not fail.
	Failure(pub errs.Public) W
}

// Sender sends a call's notifications with the SDK. The kit's
// [toolctx.Notifier] calls it only with options it checked, in order, and
// never once the call has ended.
type Sender interface {
	// SendProgress sends a notifications/progress; without a progress
	// token from the client it sends nothing and returns nil.
	SendProgress(opts toolctx.ProgressOptions) error
	// SendLog sends a notifications/message; opts.Level is set.
	SendLog(opts toolctx.LogOptions) error
}

// Call is one tools/call an adapter serves. Fill Request (the zero Call is
// ready otherwise), then call [Call.Serve] or [Call.Observe] once.
type Call[W any] struct {
	// Request is the call as the adapter decoded it from the SDK's
	// request; the chain receives a pointer to it.
	Request toolctx.Request

	cfg      *Config
	ctx      context.Context
	codec    Codec[W]
	notifier notifier
	observed bool // run by Observe: no result is checked

	// The contained run (run): its context, handler, answer and end.
	chain     chainContext[W]
	h         toolctx.Handler
	out       W
	answering bool
	esc       escape

	// The last result checked (for the chain's hooks, or the answer), so
	// that a result is encoded once.
	mu      sync.Mutex
	checked bool
	memoRes *toolctx.CallResult
	memoOut W
	memoErr error
}

// Serve runs h for the call and returns what the SDK sends: ctx is the
// context the chain runs in (the SDK's, or one derived from it), cfg the
// adapter's options, codec and s the adapter's half. h runs contained and
// with a stack grown at once (see [Run]): a panic or runtime.Goexit that
// escapes it, or the encoding of its result, ends the call as the generic
// internal failure, logged with the value and its stack to the fallback
// logger. The chain's context carries the call as its [ResultChecker]
// ([Sendable]) and the call's [toolctx.Notifier], which refuses to send once
// Serve has returned. When ctx has ended by the time the chain returns
// (the client cancelled, or the call's deadline passed), the SDK gets a
// content-free canceled (or timeout) result, whatever the chain returned
// late. A result that cannot be sent (the codec says why) is logged and
// answered with the internal failure of that reason.
func (c *Call[W]) Serve(ctx context.Context, cfg *Config, h toolctx.Handler, codec Codec[W], s Sender) W {
	c.cfg, c.ctx, c.codec, c.notifier.s, c.h = cfg, ctx, codec, s, h
	c.chain = chainContext[W]{Context: ctx, c: c}
	contain.Do((*served[W])(c)) // c holds what run needs; converted, not a method value, which allocates
	// The chain has returned: nothing more is sent about the call (a
	// goroutine the handler left behind gets toolctx.ErrCallEnded).
	c.notifier.end()
	pe := c.esc.pe
	if pe == nil {
		return c.out
	}
	c.logEscaped(pe, c.answering)
	if cerr := ctx.Err(); cerr != nil {
		pub, _ := errs.Normalize(cerr)
		return codec.Failure(pub)
	}
	return codec.Failure(c.generic())
}

// served is a Call as the [contain.Runner] Serve runs: a pointer
// conversion, where the method value c.run would be an allocation per call.
type served[W any] Call[W]

// Run is Serve's contained function.
func (s *served[W]) Run() { (*Call[W])(s).run() }

// run is Serve's contained function (see Run).
func (c *Call[W]) run() {
	defer c.esc.catch()
	res := c.h.CallTool(&c.chain, &c.Request)
	c.answering = true
	c.out = c.answer(res)
	c.esc.returned = true
}

// chainContext is the context a served call's chain runs in: the SDK's
// (Serve's ctx), carrying the call for [CodecFrom], as its [ResultChecker]
// and its [toolctx.Notifier], as context.WithValue, [WithResultChecker]
// and [toolctx.WithNotifier] would, in no allocation of its own (it is part
// of the Call).
type chainContext[W any] struct {
	context.Context
	c *Call[W]
}

type callKey struct{}

// Value answers CodecFrom's, Sendable's and toolctx's Notifier key (see
// internal/notifykey), and defers to the SDK's context otherwise.
func (x *chainContext[W]) Value(key any) any {
	switch key.(type) {
	case callKey:
		return x.c
	case resultCheckerKey:
		if x.c.observed {
			return nil
		}
		return x.c
	case notifykey.Key:
		return &x.c.notifier
	}
	return x.Context.Value(key)
}

// CodecFrom returns the codec given to [Call.Serve] or [Call.Observe] for
// the call whose chain runs in ctx (or a context derived from it), or nil
// outside one: how an adapter's terminal handler, and a tool it registered,
// find the call's own state when that state is its codec.
func CodecFrom[W any](ctx context.Context) Codec[W] {
	if c, _ := ctx.Value(callKey{}).(*Call[W]); c != nil {
		return c.codec
	}
	return nil
}

// Observe runs h for a call the SDK has answered already (it rejected the
// call before the adapter's middleware, say), so that the chain's hooks see
// it too; the chain's result is returned, and nothing is sent: the call's
// Notifier has ended before h runs, and codec (nil, or the adapter's
// per-call state, for [CodecFrom]) encodes nothing, as no result is
// checked. Like [Call.Serve] it runs h contained; a panic or Goexit that
// escapes is logged and returned as a failure.
func (c *Call[W]) Observe(ctx context.Context, cfg *Config, h toolctx.Handler, codec Codec[W]) *toolctx.CallResult {
	c.cfg, c.ctx, c.codec, c.observed = cfg, ctx, codec, true
	c.notifier.end()
	c.chain = chainContext[W]{Context: ctx, c: c}
	var res *toolctx.CallResult
	if pe := Run(func() { res = h.CallTool(&c.chain, &c.Request) }); pe != nil {
		c.logEscaped(pe, false)
		return toolctx.ErrorResult(pe)
	}
	return res
}

// answer is what the SDK gets for the chain's result res.
func (c *Call[W]) answer(res *toolctx.CallResult) W {
	if cerr := c.ctx.Err(); cerr != nil {
		// The client cancelled (or the call's deadline passed): the SDK
		// may write a response anyway, so it carries nothing of the call.
		pub, _ := errs.Normalize(cerr)
		return c.codec.Failure(pub)
	}
	out, err := c.check(res)
	if err != nil {
		// A result an interceptor made outside every hook that checks
		// (Sendable), or a public detail that cannot be encoded: the chain
		// has ended, so this can only be logged.
		args := []any{"error", err}
		if pe := errs.PanicOf(err); pe != nil {
			args = append(args, "stack", string(pe.Stack))
		}
		c.log(c.cfg.Name+": the chain's result cannot be sent; the client gets an internal failure", args...)
		pub, _ := c.cfg.Normalizer.Normalize(err)
		return c.codec.Failure(errs.Public{Code: pub.Code, Message: pub.Message}) // a detail might not encode either
	}
	return out
}

// CheckResult implements [ResultChecker] for the chain's hooks: it returns
// why the SDK could not send res, as the codec encodes it (once: the
// answer reuses the encoding of the result last checked).
func (c *Call[W]) CheckResult(res *toolctx.CallResult) error {
	_, err := c.check(res)
	return err
}

func (c *Call[W]) check(res *toolctx.CallResult) (W, error) {
	c.mu.Lock()
	if c.checked && c.memoRes == res {
		out, err := c.memoOut, c.memoErr
		c.mu.Unlock()
		return out, err
	}
	c.mu.Unlock()
	out, err := c.encode(res)
	c.mu.Lock()
	c.checked, c.memoRes, c.memoOut, c.memoErr = true, res, out, err
	c.mu.Unlock()
	return out, err
}

// encode is the codec's Encode, a panic in it returned as the reason.
// (Needed here, not only in Serve's containment: a hook that asks
// Sendable gets a failure it can record, and the chain goes on.)
func (c *Call[W]) encode(res *toolctx.CallResult) (out W, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero W
			out, err = zero, fmt.Errorf("%s: encoding the result panicked: %w", c.cfg.Name, errs.NewPanicError(v))
		}
	}()
	return c.codec.Encode(c.ctx, res)
}

func (c *Call[W]) generic() errs.Public {
	msg := c.cfg.Normalizer.GenericMessage
	if msg == "" {
		msg = errs.GenericMessage
	}
	return errs.Public{Code: errs.CodeInternal, Message: msg}
}

// logEscaped reports a panic or Goexit that escaped the whole chain (or
// its answer) to the fallback logger, with its stack: the chain's own hooks
// may not have seen it.
func (c *Call[W]) logEscaped(pe *errs.PanicError, answering bool) {
	msg := ": a panic escaped the middleware chain; add middleware.Recover to the chain"
	switch {
	case pe.Value == errs.ErrGoexit:
		msg = ": runtime.Goexit was called during a tool call; the call ends as an internal failure"
	case answering:
		msg = ": encoding the chain's result panicked; the client gets the generic failure"
	}
	c.log(c.cfg.Name+msg, "panic", pe, "stack", string(pe.Stack))
}

// log writes one error line about the call to the fallback logger,
// contained: a logger (or a value's Error method) that panics or calls
// Goexit is ignored.
func (c *Call[W]) log(msg string, args ...any) {
	Run(func() {
		// Values that print a raw cause are rendered with fmt, which
		// survives their Error and String methods panicking.
		for i := 1; i < len(args); i += 2 {
			if _, ok := args[i].(string); !ok {
				args[i] = fmt.Sprint(args[i])
			}
		}
		args = append(args, "tool", c.Request.Tool, "call_id", c.Request.CallID)
		c.cfg.logger().ErrorContext(c.ctx, msg, args...)
	})
}

// Run calls f contained and returns nil once f has returned, or the cause
// of f's end otherwise: a panic's value, or [errs.ErrGoexit] for a
// runtime.Goexit, in an [*errs.PanicError] with the stack. f runs on a
// coroutine of its own (iter.Pull's machinery: no thread is woken for it),
// whose stack internal/contain grows at once, before f's first frame, to
// 16 KiB: a tools/call grows a new coroutine's small stack several times
// deep inside the SDK and the chain, each time copying every frame in use,
// and growing it once at the start costs one small copy. (It pays end to
// end: toolmw / bare
// on go-sdk in-memory was 0.989-1.043 with it and 1.078-1.110 without it,
// mcp-go in-process 1.063-1.093 with and 1.131-1.162 without, five
// alternating runs each on 2026-12-01 of `go test ./bench -run '^$'
// -bench 'Interleaved/(sdk-in-memory|mcpgo-in)' -benchtime 1000x`.)
func Run(f func()) *errs.PanicError {
	var e escape
	contain.Run(func() {
		defer e.catch()
		f()
		e.returned = true
	})
	return e.pe
}

// escape is how a contained function ended.
type escape struct {
	returned bool
	pe       *errs.PanicError
}

// catch is deferred on the contained coroutine: when the function did not
// return, it records why, there, so that the stack is the panic's. A
// Goexit goes on after it (recover returns nil for one) and contain.Run
// lets it finish.
func (e *escape) catch() {
	if e.returned {
		return
	}
	v := recover()
	if v == nil {
		// A panic(nil) recovers as a *runtime.PanicNilError since Go 1.21;
		// under GODEBUG=panicnil=1 it is taken for a Goexit, which ends the
		// same way.
		v = errs.ErrGoexit
	}
	e.pe = errs.NewPanicError(v)
}
