package middleware

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// NoteAttempts is the note [Retry] writes on a call that took more than one
// attempt: how many it took.
const NoteAttempts = "attempts"

// RetryConfig configures [Retry].
type RetryConfig struct {
	// MaxAttempts is how many times the handler may run, the first time
	// included. Zero means 3; it must not be 1 or less otherwise.
	MaxAttempts int
	// Codes are the public codes of the failures that are retried.
	// Default: [errs.CodeUnavailable] only.
	Codes []errs.Code
	// Retryable, when set, is asked about each failure whose code is not
	// in Codes, and retries it when it returns true (a driver's "connection
	// reset", say, which the client sees as internal). It gets the
	// attempt's number and outcome and reaches the raw cause through
	// RetryAttempt.Cause. It must be fast and must not panic.
	Retryable func(ctx context.Context, a RetryAttempt) bool
	// InitialBackoff is the wait before the second attempt (default
	// 100ms); each later wait doubles, up to MaxBackoff (default 2s).
	// Each wait is drawn at random between half of it and all of it, so
	// that callers who failed together do not retry together.
	InitialBackoff time.Duration
	// MaxBackoff caps the wait between attempts.
	MaxBackoff time.Duration
	// Normalizer classifies a raw failure (use the chain's). Default:
	// errs.Normalizer{}.
	Normalizer errs.Normalizer
}

// RetryAttempt is what [RetryConfig.Retryable] learns of a failed attempt.
type RetryAttempt struct {
	// Attempt is the attempt's number, 1 for the first.
	Attempt int
	// Outcome is how the attempt failed, as the caller would see it.
	Outcome toolctx.Outcome

	cause error
}

// Cause returns the attempt's raw error, or nil. It is for the server side
// only.
func (a RetryAttempt) Cause() error { return a.cause }

// Retry runs the handler again when it fails in a way the configuration
// marks retryable, up to MaxAttempts times, with capped exponential
// backoff and jitter between attempts. It is opt-in per tool: use it with
// [When] for idempotent tools only (a tool that may have done its work
// before failing must not run twice).
//
// Retry never outlives the call: it does not start a wait that would end
// after the call's deadline, and it stops at once when the call's context
// is cancelled, returning the last attempt's result. A panic is not
// retried. The call has one audit row; when it took more than one
// attempt, the row has the note "attempts" with their number, and the
// outcome, cause and Diagnostics event of the last attempt only. Place it
// inside Recover and the guards, outside Timeout when each attempt should
// have a deadline of its own. A configuration mistake panics, at
// construction.
func Retry(cfg RetryConfig) toolctx.Middleware {
	r := newRetrier(cfg)
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			return r.call(ctx, req, next)
		})
	}
}

type retrier struct {
	attempts   int
	codes      []errs.Code
	retryable  func(context.Context, RetryAttempt) bool
	initial    time.Duration
	maxBackoff time.Duration
	normalizer errs.Normalizer
	jitter     func(n int64) int64 // rand.Int64N; a test may fix it
}

func newRetrier(cfg RetryConfig) *retrier {
	switch {
	case cfg.MaxAttempts < 0 || cfg.MaxAttempts == 1:
		panic(fmt.Sprintf("middleware.Retry: MaxAttempts must be at least 2 (0 means 3), got %d", cfg.MaxAttempts))
	case cfg.InitialBackoff < 0:
		panic(fmt.Sprintf("middleware.Retry: InitialBackoff must not be negative, got %v", cfg.InitialBackoff))
	case cfg.MaxBackoff < 0:
		panic(fmt.Sprintf("middleware.Retry: MaxBackoff must not be negative, got %v", cfg.MaxBackoff))
	}
	for _, c := range cfg.Codes {
		if !c.Valid() {
			panic(fmt.Sprintf("middleware.Retry: %q is not a code of errs", c))
		}
	}
	r := &retrier{
		attempts:   cfg.MaxAttempts,
		codes:      slices.Clone(cfg.Codes),
		retryable:  cfg.Retryable,
		initial:    cfg.InitialBackoff,
		maxBackoff: cfg.MaxBackoff,
		normalizer: cfg.Normalizer,
		jitter:     rand.Int64N,
	}
	if r.attempts == 0 {
		r.attempts = 3
	}
	if r.codes == nil {
		r.codes = []errs.Code{errs.CodeUnavailable}
	}
	if r.initial == 0 {
		r.initial = 100 * time.Millisecond
	}
	if r.maxBackoff == 0 {
		r.maxBackoff = 2 * time.Second
	}
	r.maxBackoff = max(r.maxBackoff, r.initial)
	return r
}

func (r *retrier) call(ctx context.Context, req *toolctx.Request, next toolctx.Handler) *toolctx.CallResult {
	var res *toolctx.CallResult
	n := 1
	for ; ; n++ {
		res = next.CallTool(ctx, req)
		if n == r.attempts || !r.shouldRetry(ctx, n, res) || !r.sleep(ctx, r.backoff(n)) {
			break
		}
	}
	if n > 1 {
		res = res.WithNote(NoteAttempts, strconv.Itoa(n))
	}
	return res
}

// shouldRetry reports whether attempt n's result is a failure to retry.
func (r *retrier) shouldRetry(ctx context.Context, n int, res *toolctx.CallResult) bool {
	if res == nil || !res.Failed() || ctx.Err() != nil {
		return false
	}
	o := toolctx.Classify(ctx, res, r.normalizer)
	if slices.Contains(r.codes, o.Public.Code) {
		return true
	}
	return r.retryable != nil && r.retryable(ctx, RetryAttempt{Attempt: n, Outcome: o, cause: res.Cause()})
}

// backoff is the wait after attempt n: initial·2^(n-1), capped, drawn
// between half of it and all of it.
func (r *retrier) backoff(n int) time.Duration {
	d := r.maxBackoff
	if n-1 < 62 {
		if e := r.initial << (n - 1); e > 0 && e < d {
			d = e
		}
	}
	half := d / 2
	return half + time.Duration(r.jitter(int64(d-half)+1))
}

// sleep waits d, and reports false without waiting when the call's
// deadline would pass first, or as soon as the call's context ends.
func (r *retrier) sleep(ctx context.Context, d time.Duration) bool {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
