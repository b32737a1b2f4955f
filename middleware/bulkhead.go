package middleware

import (
	"context"
	"fmt"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// BulkheadConfig configures [Bulkhead].
type BulkheadConfig struct {
	// Limit is how many calls may be in flight at once, per key.
	// Required: at least 1.
	Limit int
	// MaxWait is how long a call over the limit waits for a slot before it
	// is rejected. Zero rejects it at once. The wait ends early when the
	// call's context does (the client cancelled, a deadline passed): the
	// call then ends as canceled or timeout.
	MaxWait time.Duration
	// Key picks the bulkhead a call counts against. Default: nil, one
	// bulkhead for every call that passes through (use [When] for some
	// tools); [ToolKey] gives one per tool, [CallerKey] one per caller.
	Key KeyFunc
	// MaxKeys bounds how many keys are tracked (default 10,000). A key
	// with nothing in flight is dropped when room is needed; when every
	// tracked key has calls in flight, a call under a new key is rejected.
	MaxKeys int
	// Code is the code of a rejection: [errs.CodeUnavailable] (the
	// default: the server is busy) or [errs.CodeRateLimited] (the caller
	// has too much in flight, with a per-caller Key).
	Code errs.Code
	// RetryAfter is the hint a rejection gives, in its detail
	// "retry_after_ms". Default 1s.
	RetryAfter time.Duration
}

// Bulkhead bounds how many calls run at once: at most Limit in flight per
// key. A call over the limit waits up to MaxWait for a slot, then is
// rejected before the interceptors inside and the handler run, with the
// public error (unavailable by default) "too many calls in flight: retry
// after 1s" and the detail {"retry_after_ms": 1000, "max_in_flight": N}.
// The audit row has its code; Diagnostics is not called.
//
// One Bulkhead is one set of slots, shared by every handler it wraps. Put
// it inside RateLimit: a call the rate limiter rejects takes no slot. The
// admitted path without a Key is a channel send and receive; with a Key it
// adds a map lookup under a sharded lock; neither allocates. A
// configuration mistake panics, at construction. In observe mode
// ([Observe]) a call never waits: one that finds no free slot runs at once
// without one and is noted "would_reject=bulkhead".
func Bulkhead(cfg BulkheadConfig) toolctx.Middleware {
	return newBulkhead(cfg).middleware
}

type bulkhead struct {
	one     chan struct{}        // the slots without a Key
	keys    *keyTable[bulkSlots] // the slots per key
	key     KeyFunc
	maxWait time.Duration
	reject  *toolctx.CallResult
}

// bulkSlots are one key's slots; waiting counts the calls waiting for
// one. Both are read under the table's shard lock, so a key with calls in
// flight or waiting is never dropped.
type bulkSlots struct {
	sem     chan struct{}
	waiting int
}

func newBulkhead(cfg BulkheadConfig) *bulkhead {
	switch {
	case cfg.Limit < 1:
		panic(fmt.Sprintf("middleware.Bulkhead: Limit must be at least 1, got %d", cfg.Limit))
	case cfg.MaxWait < 0:
		panic(fmt.Sprintf("middleware.Bulkhead: MaxWait must not be negative, got %v", cfg.MaxWait))
	case cfg.MaxKeys < 0:
		panic(fmt.Sprintf("middleware.Bulkhead: MaxKeys must not be negative, got %d", cfg.MaxKeys))
	case cfg.Code != "" && cfg.Code != errs.CodeUnavailable && cfg.Code != errs.CodeRateLimited:
		panic(fmt.Sprintf("middleware.Bulkhead: Code must be unavailable or rate_limited, got %q", cfg.Code))
	case cfg.RetryAfter < 0:
		panic(fmt.Sprintf("middleware.Bulkhead: RetryAfter must not be negative, got %v", cfg.RetryAfter))
	}
	code := cfg.Code
	if code == "" {
		code = errs.CodeUnavailable
	}
	after := cfg.RetryAfter
	if after == 0 {
		after = time.Second
	}
	b := &bulkhead{
		key:     cfg.Key,
		maxWait: cfg.MaxWait,
		// The rejection is the same every time: built once, shared (results
		// are immutable).
		reject: toolctx.ErrorResult(errs.New(code, "too many calls in flight: retry after "+after.String()).
			WithDetail(map[string]any{"retry_after_ms": after.Milliseconds(), "max_in_flight": cfg.Limit})),
	}
	if cfg.Key == nil {
		b.one = make(chan struct{}, cfg.Limit)
		return b
	}
	maxKeys := cfg.MaxKeys
	if maxKeys == 0 {
		maxKeys = defaultMaxKeys
	}
	limit := cfg.Limit
	// An idle key's slots hold nothing: they may go at any time, so the
	// entries do not age and the admitted path reads no clock.
	b.keys = newKeyTable(maxKeys, 0,
		func(s *bulkSlots) { s.sem = make(chan struct{}, limit) },
		func(s *bulkSlots) bool { return len(s.sem) == 0 && s.waiting == 0 })
	return b
}

func (b *bulkhead) middleware(next toolctx.Handler) toolctx.Handler {
	if b.keys == nil {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			select {
			case b.one <- struct{}{}:
			default:
				if res := b.wait(ctx, b.one); res != nil {
					return b.refuse(ctx, res, next, req)
				}
			}
			defer func() { <-b.one }()
			return next.CallTool(ctx, req)
		})
	}
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		e, mu := b.keys.lock(b.key(req), 0)
		if e == nil { // every tracked key is busy
			mu.Unlock()
			return b.refuse(ctx, b.reject, next, req)
		}
		s := &e.v
		select {
		case s.sem <- struct{}{}:
			mu.Unlock()
		default:
			s.waiting++
			mu.Unlock()
			res := b.wait(ctx, s.sem)
			mu.Lock()
			s.waiting--
			mu.Unlock()
			if res != nil {
				return b.refuse(ctx, res, next, req)
			}
		}
		defer func() { <-s.sem }()
		return next.CallTool(ctx, req)
	})
}

// wait waits up to MaxWait for a slot of sem; it returns nil with the slot
// taken, or the call's result without one.
func (b *bulkhead) wait(ctx context.Context, sem chan struct{}) *toolctx.CallResult {
	if b.maxWait <= 0 || inObserveMode(ctx) { // observe mode never makes a call wait
		return b.reject
	}
	t := time.NewTimer(b.maxWait)
	defer t.Stop()
	select {
	case sem <- struct{}{}:
		return nil
	case <-t.C:
		return b.reject
	case <-ctx.Done():
		return toolctx.ErrorResult(ctx.Err())
	}
}

// refuse returns res, the result of a call that got no slot: the
// rejection, which in observe mode ([Observe]) runs the call without a
// slot instead, or the call's cancellation while it waited.
func (b *bulkhead) refuse(ctx context.Context, res *toolctx.CallResult, next toolctx.Handler, req *toolctx.Request) *toolctx.CallResult {
	if res != b.reject {
		return res
	}
	return reject(ctx, guardBulkhead, res, next, req)
}
