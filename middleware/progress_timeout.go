package middleware

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/ctxend"
	"github.com/toolmw/toolmw/toolctx"
)

// NoteTimeout is the note [ProgressTimeout] writes on a call it timed out:
// "idle" when the handler went [ProgressTimeoutConfig.Idle] without
// reporting progress, "max" when the call reached
// [ProgressTimeoutConfig.Max].
const NoteTimeout = "timeout"

// ProgressTimeoutConfig configures [ProgressTimeout].
type ProgressTimeoutConfig struct {
	// Idle is how long a call may go without reporting progress: its
	// deadline is Idle after it enters the interceptor, and each progress
	// report of the handler (toolctx.Progress) moves it to Idle after the
	// report. It must be positive.
	Idle time.Duration
	// Max is the hard limit, from when the call enters the interceptor,
	// that no progress extends. It must be at least Idle.
	Max time.Duration
}

// ProgressTimeout is [Timeout] for long tools that report their progress,
// as the MCP specification's guidance on timeouts has it: the deadline
// resets on each progress notification, with a maximum that always holds.
// The handler's context ends when cfg.Idle passes without a progress
// report, or when cfg.Max has passed since the call entered, whichever
// comes first; its Deadline is the maximum (or the caller's, if earlier).
// The context's Err is then context.DeadlineExceeded.
//
// A progress report is a call of toolctx.Progress (or the Notifier's
// Progress) in the handler's context that returned nil: one the adapter
// sent, or, when the client gave no progress token, one it had nothing to
// send for (the handler is making progress either way). A report the
// notifier refused (a progress that does not increase, invalid options)
// resets nothing. A go-sdk or mcp-go handler registered natively, which
// reports through its SDK, bypasses toolctx: only the maximum bounds it.
//
// When the deadline passes, the client gets a public [errs.CodeTimeout]
// result, "the tool call timed out: no progress for 2s" or "the tool call
// timed out after 1m0s" (the maximum), and the row the same outcome
// (timeout), its message and the note [NoteTimeout] ("idle" or "max"); what
// the handler returned late is recorded as for [Timeout] (a raw error's
// message, a public error named next to the timeout), and its notes are
// kept. A panic stays an internal failure. When the caller cancels (the
// client's notifications/cancelled) or its own deadline passes first, the
// result is left to the caller, and the row says canceled (or timeout, for
// the caller's deadline): a client's cancellation is never recorded as a
// server timeout. (On go-sdk's stateless streamable HTTP the client's
// cancellation does not reach the call; see README.)
//
// Place it where Timeout goes, inside Recover. The handler runs in the
// caller's goroutine and must honour ctx. An Idle that is not positive, or
// a Max below Idle, panics, at construction.
func ProgressTimeout(cfg ProgressTimeoutConfig) toolctx.Middleware {
	return progressTimeout(cfg, realClock{})
}

// clock is the time ProgressTimeout reads and the timers it sets; tests
// stand in one they advance by hand.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) timer
}

type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

func progressTimeout(cfg ProgressTimeoutConfig, clk clock) toolctx.Middleware {
	if cfg.Idle <= 0 {
		panic(fmt.Sprintf("middleware.ProgressTimeout: Idle must be positive, got %v", cfg.Idle))
	}
	if cfg.Max < cfg.Idle {
		panic(fmt.Sprintf("middleware.ProgressTimeout: Max (%v) must be at least Idle (%v)", cfg.Max, cfg.Idle))
	}
	idle := errs.Timeout(fmt.Sprintf("the tool call timed out: no progress for %v", cfg.Idle))
	hard := errs.Timeout(fmt.Sprintf("the tool call timed out after %v", cfg.Max))
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			pc := newProgressCtx(ctx, cfg, clk)
			defer pc.stop()
			res := next.CallTool(toolctx.WithNotifier(pc, &progressNotifier{inner: toolctx.NotifierFrom(ctx), pc: pc}), req)
			if ctxend.Err(ctx) != nil {
				return res // the caller cancelled, or its own deadline passed
			}
			switch pc.expired() {
			case expiredIdle:
				return withNotesOf(timedOut(pc, res, idle), res).WithNote(NoteTimeout, "idle")
			case expiredMax:
				return withNotesOf(timedOut(pc, res, hard), res).WithNote(NoteTimeout, "max")
			}
			return res
		})
	}
}

type expiry int

const (
	live expiry = iota
	expiredIdle
	expiredMax
)

// progressCtx is the handler's context under ProgressTimeout: the caller's,
// ended early by the interceptor's own deadline, which progress moves. Its
// Done channel is that of a context.WithCancelCause of the caller's (so
// contexts derived from it attach to it without a goroutine), its Err is
// context.DeadlineExceeded once the interceptor ended it, and its cause
// (context.Cause) then says which deadline passed.
type progressCtx struct {
	context.Context // context.WithCancelCause(caller)
	cancel          context.CancelCauseFunc
	clk             clock
	idle            time.Duration
	hard            time.Time // start + Max

	mu     sync.Mutex
	idleAt time.Time // the current idle deadline, never after hard
	fired  expiry    // set once the interceptor ended the context
	timer  timer
}

func newProgressCtx(parent context.Context, cfg ProgressTimeoutConfig, clk clock) *progressCtx {
	inner, cancel := context.WithCancelCause(parent)
	start := clk.Now()
	pc := &progressCtx{Context: inner, cancel: cancel, clk: clk, idle: cfg.Idle, hard: start.Add(cfg.Max), idleAt: start.Add(cfg.Idle)}
	pc.mu.Lock()
	pc.timer = clk.AfterFunc(cfg.Idle, pc.expire)
	pc.mu.Unlock()
	return pc
}

// Deadline is the maximum, or the caller's deadline when that is earlier:
// the latest the context can end (Deadline must not change over time, and
// the idle deadline does).
func (pc *progressCtx) Deadline() (time.Time, bool) {
	if d, ok := pc.Context.Deadline(); ok && d.Before(pc.hard) {
		return d, true
	}
	return pc.hard, true
}

// Err is context.DeadlineExceeded once the interceptor's deadline ended the
// context, and the caller's context's error otherwise.
func (pc *progressCtx) Err() error {
	err := pc.Context.Err()
	if err == nil {
		return nil
	}
	pc.mu.Lock()
	fired := pc.fired
	pc.mu.Unlock()
	if fired != live {
		return context.DeadlineExceeded
	}
	return err
}

// expire runs when the timer fires: it ends the context if the idle
// deadline (as progress has moved it) or the maximum has passed, and sets
// the timer again otherwise.
func (pc *progressCtx) expire() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.fired != live || pc.timer == nil {
		return
	}
	now := pc.clk.Now()
	if now.Before(pc.idleAt) {
		pc.timer.Reset(pc.idleAt.Sub(now))
		return
	}
	pc.fire(now)
}

// fire ends the context because a deadline passed at now (called with mu
// held), unless the caller's context ended first: a cancellation is the
// caller's, never a timeout. cancel runs no code of ours, so holding mu is
// safe, and Err never sees the context ended without knowing why.
func (pc *progressCtx) fire(now time.Time) {
	if pc.Context.Err() != nil {
		return
	}
	pc.fired = pc.kind(now)
	pc.cancel(&deadlineCause{kind: pc.fired})
}

// kind is which deadline has passed at now (called with mu held, once
// now is not before idleAt).
func (pc *progressCtx) kind(now time.Time) expiry {
	if !now.Before(pc.hard) || !pc.idleAt.Before(pc.hard) {
		return expiredMax
	}
	return expiredIdle
}

// progressed moves the idle deadline to Idle from now, never past the
// maximum; once the context has ended, nothing moves.
func (pc *progressCtx) progressed() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.fired != live {
		return
	}
	next := pc.clk.Now().Add(pc.idle)
	if next.After(pc.hard) {
		next = pc.hard
	}
	if next.After(pc.idleAt) {
		pc.idleAt = next
	}
}

// expired reports whether a deadline of the interceptor has passed, because
// it fired or by the clock (a timer on a loaded machine runs late; then it
// ends the context now).
func (pc *progressCtx) expired() expiry {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.fired == live {
		if now := pc.clk.Now(); !now.Before(pc.idleAt) {
			pc.fire(now)
		}
	}
	return pc.fired
}

// stop releases the timer and the context once the handler has returned.
func (pc *progressCtx) stop() {
	pc.mu.Lock()
	t := pc.timer
	pc.timer = nil
	pc.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	pc.cancel(context.Canceled)
}

// deadlineCause is the cause (context.Cause) of a context ProgressTimeout
// ended: which deadline passed. It is a context.DeadlineExceeded.
type deadlineCause struct{ kind expiry }

func (c *deadlineCause) Error() string {
	if c.kind == expiredMax {
		return "middleware.ProgressTimeout: the maximum passed"
	}
	return "middleware.ProgressTimeout: no progress within the idle deadline"
}

func (c *deadlineCause) Unwrap() error { return context.DeadlineExceeded }

// progressNotifier passes the handler's notifications on to the caller's
// Notifier and moves the idle deadline on each progress report it took.
type progressNotifier struct {
	inner toolctx.Notifier
	pc    *progressCtx
}

func (n *progressNotifier) Progress(ctx context.Context, opts toolctx.ProgressOptions) error {
	if err := n.inner.Progress(ctx, opts); err != nil {
		return err
	}
	n.pc.progressed()
	return nil
}

func (n *progressNotifier) Log(ctx context.Context, opts toolctx.LogOptions) error {
	return n.inner.Log(ctx, opts)
}
