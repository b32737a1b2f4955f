package middleware

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
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
	// Store keeps the slots outside the process, shared by every replica
	// that uses it (middleware/redisstore): at most Limit calls per key
	// are in flight across all of them. Nil: in the process.
	Store SemaphoreStore
	// StorePolicy says how the bulkhead uses Store: its Name, how long it
	// waits for each store call and whether it fails open (the default:
	// the in-process slots decide alone while the store fails) or closed.
	// Failing open, each replica admits up to Limit while the store is
	// down (N·Limit across N replicas: the bound each had before they
	// shared one), so a store outage is not a tool outage; fail closed
	// when what the bulkhead protects cannot take that. Ignored without a
	// Store.
	StorePolicy StorePolicy
	// LeaseTTL is how long a slot taken from Store stays taken when its
	// replica stops renewing it (it died mid-call); a live call renews its
	// lease every third of it. Default 30s; at least three StorePolicy
	// Timeouts. Ignored without a Store.
	LeaseTTL time.Duration
}

// Bulkhead bounds how many calls run at once: at most Limit in flight per
// key. A call over the limit waits up to MaxWait for a slot, then is
// rejected before the interceptors inside and the handler run, with the
// public error (unavailable by default) "too many calls in flight: retry
// after 1s" and the detail {"retry_after_ms": 1000, "max_in_flight": N}.
// The audit row has its code; Diagnostics is not called.
//
// With a Store, a call takes its slot there (one round trip, bounded by
// the StorePolicy's Timeout) and gives it back when it ends, on every path
// that gives an in-process slot back (a panic too); a call over the limit
// asks again, with a growing pause of up to 20ms, until MaxWait. A slot
// whose release fails is free again after LeaseTTL.
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

	store    SemaphoreStore // nil: the slots above decide alone
	sem      Semaphore      // for store
	sg       storeGuard
	leaseTTL time.Duration
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
	if cfg.Store != nil {
		b.store = cfg.Store
		b.sg = newStoreGuard("Bulkhead", cfg.StorePolicy)
		b.leaseTTL = cfg.LeaseTTL
		switch {
		case b.leaseTTL == 0:
			b.leaseTTL = 30 * time.Second
		case b.leaseTTL < 3*b.sg.timeout:
			panic(fmt.Sprintf("middleware.Bulkhead: LeaseTTL must be at least three StorePolicy timeouts (%v), got %v", 3*b.sg.timeout, cfg.LeaseTTL))
		}
		b.sem = Semaphore{Limit: cfg.Limit, TTL: b.leaseTTL}
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
	if b.store != nil {
		return b.shared(next, b.local(next))
	}
	return b.local(next)
}

// local is the bulkhead on the in-process slots.
func (b *bulkhead) local(next toolctx.Handler) toolctx.Handler {
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
		e, mu := b.keys.lock(callKey(ctx, "Bulkhead", b.key, req), 0)
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

// shared is the bulkhead on its store, with local (the in-process slots)
// as the fallback.
func (b *bulkhead) shared(next, local toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		var key string
		if b.key != nil {
			key = callKey(ctx, "Bulkhead", b.key, req)
		}
		lease, res, err := b.acquire(ctx, b.sg.ns+key)
		if err != nil {
			if ctx.Err() != nil { // the call ended while the store was asked
				return toolctx.ErrorResult(ctx.Err())
			}
			if res := b.sg.failed(ctx, req, err); res != nil {
				return reject(ctx, guardBulkhead, res, next, req)
			}
			return b.sg.noted(local.CallTool(ctx, req), err)
		}
		b.sg.answered(ctx, req)
		if res != nil {
			return b.refuse(ctx, res, next, req)
		}
		h := b.hold(ctx, req, lease)
		defer h.end()
		return next.CallTool(ctx, req)
	})
}

// maxPoll is the longest pause between two asks for a store's slot.
const maxPoll = 20 * time.Millisecond

// acquire takes a slot of key from the store, asking again until MaxWait
// while every slot is taken. It returns the lease, or the call's result
// without one (a rejection, the call's end), or the store's error.
func (b *bulkhead) acquire(ctx context.Context, key string) (SemaphoreLease, *toolctx.CallResult, error) {
	var deadline time.Time
	if b.maxWait > 0 {
		deadline = time.Now().Add(b.maxWait)
	}
	pause := time.Millisecond
	for {
		sctx, cancel := b.sg.ctx(ctx)
		lease, err := b.store.Acquire(sctx, key, b.sem)
		cancel()
		if err != nil || lease != nil {
			return lease, nil, err
		}
		left := time.Until(deadline)
		if b.maxWait <= 0 || left <= 0 || inObserveMode(ctx) { // observe mode never makes a call wait
			return nil, b.reject, nil
		}
		// A pause with jitter, so that waiting replicas do not ask in step.
		t := time.NewTimer(min(pause/2+rand.N(pause/2+1), left))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, toolctx.ErrorResult(ctx.Err()), nil
		}
		pause = min(2*pause, maxPoll)
	}
}

// heldLease is a store's slot held by a running call: renewed every third
// of its TTL until the call ends, then released.
type heldLease struct {
	b     *bulkhead
	ctx   context.Context
	req   *toolctx.Request
	lease SemaphoreLease

	mu    sync.Mutex
	ended bool
	timer *time.Timer
}

func (b *bulkhead) hold(ctx context.Context, req *toolctx.Request, lease SemaphoreLease) *heldLease {
	h := &heldLease{b: b, ctx: ctx, req: req, lease: lease}
	h.mu.Lock()
	h.timer = time.AfterFunc(b.leaseTTL/3, h.renew)
	h.mu.Unlock()
	return h
}

// renew runs on the timer: it renews the lease, unless the call has ended,
// and arms the timer again. A failed renewal is reported; the lease still
// has two thirds of its TTL for the next one.
func (h *heldLease) renew() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	ctx, cancel := h.b.sg.detachedCtx(h.ctx)
	err := h.lease.Renew(ctx)
	cancel()
	if err != nil {
		h.b.sg.report(h.ctx, h.req, "", fmt.Errorf("renewing a bulkhead slot: %w", err))
	}
	h.timer.Reset(h.b.leaseTTL / 3)
}

// end stops the renewals (waiting for one under way) and releases the
// slot, even when the call's context has ended. A failed release is
// reported; the slot is free again after its TTL.
func (h *heldLease) end() {
	h.mu.Lock()
	h.ended = true
	h.timer.Stop()
	h.mu.Unlock()
	ctx, cancel := h.b.sg.detachedCtx(h.ctx)
	err := h.lease.Release(ctx)
	cancel()
	if err != nil {
		h.b.sg.report(h.ctx, h.req, "", fmt.Errorf("releasing a bulkhead slot: %w", err))
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
