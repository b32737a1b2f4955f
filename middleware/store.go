package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// The stores behind the guards. By default [RateLimit], [Bulkhead] and
// [Cache] keep their state in the process; a fleet of replicas shares it
// through a store (middleware/redisstore implements all three on Redis).
// A store is remote, so it can be slow or down: [StorePolicy] says how long
// a guard waits for it and what the guard does without it.

// RateStore keeps [RateLimit]'s buckets for several processes.
type RateStore interface {
	// TakeToken takes one token from the bucket of key, shaped by b, and
	// reports whether there was one; when there was not, wait is how long
	// until there is. A bucket the store has never seen is full. The
	// decision and the update are one atomic step.
	TakeToken(ctx context.Context, key string, b RateBucket) (wait time.Duration, ok bool, err error)
}

// RateBucket is the shape of a [RateLimit] bucket, which a [RateStore]
// needs to decide: the generic cell rate algorithm's parameters.
type RateBucket struct {
	// Interval is the time one token takes to come back (1/Rate), at
	// least a nanosecond.
	Interval time.Duration
	// Burst is how many tokens a full bucket holds, at least 1.
	Burst int
}

// SemaphoreStore keeps [Bulkhead]'s slots for several processes.
type SemaphoreStore interface {
	// Acquire takes one of the s.Limit slots of key, without waiting,
	// for s.TTL: a slot whose lease is neither renewed nor released
	// within its TTL (its process died) is free again. It returns a nil
	// lease and a nil error when every slot is taken.
	Acquire(ctx context.Context, key string, s Semaphore) (SemaphoreLease, error)
}

// Semaphore is the shape of a [Bulkhead]'s slots, for a [SemaphoreStore].
type Semaphore struct {
	// Limit is how many slots the key has, at least 1.
	Limit int
	// TTL is how long a lease holds its slot unless renewed.
	TTL time.Duration
}

// SemaphoreLease is one slot taken from a [SemaphoreStore].
type SemaphoreLease interface {
	// Renew holds the slot for another TTL from now. It fails when the
	// lease has already expired.
	Renew(ctx context.Context) error
	// Release frees the slot. Releasing twice, or an expired lease, is
	// not an error.
	Release(ctx context.Context) error
}

// CacheStore keeps [Cache]'s results for several processes. Keys are
// opaque (a hash of the tool, the caller's partition and the arguments);
// values are encoded results, at most the cache's MaxItemBytes plus a small
// envelope.
type CacheStore interface {
	// Get returns the value stored under key, and false when there is none
	// (never stored, or expired).
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// DefaultStoreTimeout is how long a guard waits for its store by default:
// a few round trips on a local network, far below any tool call's deadline.
const DefaultStoreTimeout = 5 * time.Millisecond

// StorePolicy is how a guard uses its store: how long it waits for each
// call, what it does when the store fails (an error, or no answer within
// Timeout), and who hears of it. The zero value is the default: 5ms, fail
// open, failures logged to slog.Default() at warn level; only Name must be
// set.
//
// Failing open, the guard decides alone, with the in-process state it
// would have without a store (a rate limit or a bulkhead then counts per
// process, not per fleet; the cache misses), and the call goes on: its
// result carries the notes "store" = "fallback" and "store_cause" = the
// guard and the failure's kind ("ratelimit timeout", "cache error"), so the
// audit row says so. Failing closed, the call is rejected before the
// handler runs with the public [errs.CodeUnavailable] error "the service
// is temporarily unavailable: retry shortly", whose audit row records the
// store's raw error (the caller never sees it), and the note "store" =
// "unavailable". A failure after the handler ran (the cache's set, the
// bulkhead's release) changes nothing for the call: it is reported, the
// cache keeps the result in the process instead (noted as a fallback), and
// a slot not released expires with its lease.
type StorePolicy struct {
	// Name names this guard's state in the store: the same on every
	// replica, and distinct for each guard that shares the store (two
	// RateLimits of one store with one Name would share their buckets).
	// Required with a store.
	Name string
	// Timeout bounds each store call (a take, an acquire, a get or set, a
	// release). Zero means [DefaultStoreTimeout]; negative is a
	// construction mistake.
	Timeout time.Duration
	// FailClosed rejects the call when the store fails, instead of
	// falling back to the in-process state.
	FailClosed bool
	// OnError hears of each outage of the guard's store twice: at its
	// first failure, with the store's raw error as the event's Cause and
	// the call's details (the event's Code is [errs.CodeUnavailable] when
	// the call was rejected for it, failing closed, and empty when the call
	// went on, failing open); and when the store answers again, with a
	// [*StoreOutage] as the Cause, which counts the failures in between
	// (errors.As(ev.Cause(), &outage)). The failures in between are not
	// reported one by one: an outage under load would log every call. It
	// is called synchronously on the call's path (keep it fast). Nil logs
	// the two to slog.Default(), at warn and info level.
	OnError DiagnosticsFunc
}

// Notes of a guard whose store failed; see [StorePolicy].
const (
	// NoteStore is "fallback" (the guard decided alone) or "unavailable"
	// (the call was rejected).
	NoteStore = "store"
	// NoteStoreCause is the guard and the kind of failure: "timeout" (no
	// answer within the policy's Timeout) or "error", as in
	// "ratelimit timeout".
	NoteStoreCause = "store_cause"
)

// StoreOutage is the Cause of the event [StorePolicy.OnError] gets when a
// guard's store answers again after failing: the first failure was
// reported with its raw error, the others only counted here.
type StoreOutage struct {
	// Guard is the guard whose store failed: "ratelimit", "bulkhead" or
	// "cache".
	Guard string
	// Failures is how many of the guard's store calls failed during the
	// outage, the first one included.
	Failures int64
	// Duration is how long it lasted: from the first failure to the first
	// answer after it.
	Duration time.Duration
}

// Error says that the store answers again, after how many failures.
func (o *StoreOutage) Error() string {
	return fmt.Sprintf("the %s store answers again, after %d failed calls in %v", o.Guard, o.Failures, o.Duration)
}

// storeGuard is a guard's store policy, resolved at construction.
type storeGuard struct {
	guard      string // "ratelimit", "bulkhead", "cache": for the notes
	ns         string // Name and a separator: the prefix of the guard's keys
	timeout    time.Duration
	failClosed bool
	onError    DiagnosticsFunc
	health     *storeHealth
}

// storeHealth is whether a guard's store is in an outage, shared by the
// guard's calls: the outage begins at a failure while the store was up and
// ends at an answer while it was down.
type storeHealth struct {
	down     atomic.Bool
	failures atomic.Int64
	since    atomic.Int64 // the first failure, in nanoseconds since start
	start    time.Time    // the clock (monotonic)
}

// failed counts a failure, and reports whether it begins an outage.
func (h *storeHealth) failed() bool {
	h.failures.Add(1)
	if h.down.Load() || !h.down.CompareAndSwap(false, true) {
		return false
	}
	h.since.Store(int64(time.Since(h.start)))
	return true
}

// answered reports, when the store was down, that its outage ended, with
// its failures and duration; ok is false when it was up (the common case:
// one atomic load).
func (h *storeHealth) answered() (failures int64, lasted time.Duration, ok bool) {
	if !h.down.Load() || !h.down.CompareAndSwap(true, false) {
		return 0, 0, false
	}
	return h.failures.Swap(0), time.Since(h.start) - time.Duration(h.since.Load()), true
}

// newStoreGuard checks p for the guard of the given exported name
// ("RateLimit"), when it has a store.
func newStoreGuard(name string, p StorePolicy) storeGuard {
	switch {
	case p.Timeout < 0:
		panic(fmt.Sprintf("middleware.%s: StorePolicy.Timeout must not be negative, got %v", name, p.Timeout))
	case p.Name == "":
		panic(fmt.Sprintf("middleware.%s: StorePolicy.Name is required with a Store: the name of this guard's state, the same on every replica", name))
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = DefaultStoreTimeout
	}
	return storeGuard{guard: strings.ToLower(name), ns: p.Name + "\x00", timeout: timeout, failClosed: p.FailClosed, onError: p.OnError,
		health: &storeHealth{start: time.Now()}}
}

// storeUnavailable is the public face of a failed store, failing closed.
var storeUnavailable = errs.Public{Code: errs.CodeUnavailable, Message: "the service is temporarily unavailable: retry shortly"}

// ctx returns the context of one store call: the call's, bounded by the
// policy's timeout.
func (g *storeGuard) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, g.timeout)
}

// detachedCtx is the context of a store call that must happen even after
// the call's context ended (a release).
func (g *storeGuard) detachedCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
}

// failed handles a store failure during call req: it reports err, and
// returns the rejection when the policy fails closed (nil: go on, with
// [storeGuard.noted] on the result).
func (g *storeGuard) failed(ctx context.Context, req *toolctx.Request, err error) *toolctx.CallResult {
	var code errs.Code
	if g.failClosed {
		code = errs.CodeUnavailable
	}
	g.report(ctx, req, code, err)
	if !g.failClosed {
		return nil
	}
	return toolctx.ScrubbedResult(storeUnavailable, fmt.Errorf("%s store: %w", g.guard, err)).
		WithNote(NoteStore, "unavailable").WithNote(NoteStoreCause, g.cause(err))
}

// noted is res with the notes of a fallback caused by err.
func (g *storeGuard) noted(res *toolctx.CallResult, err error) *toolctx.CallResult {
	return res.WithNote(NoteStore, "fallback").WithNote(NoteStoreCause, g.cause(err))
}

func (g *storeGuard) cause(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return g.guard + " timeout"
	}
	return g.guard + " error"
}

// report sends a store failure to the policy's OnError (its panic is
// caught: a hook never changes the call) when it begins an outage, and
// counts it otherwise (see [StorePolicy.OnError]).
func (g *storeGuard) report(ctx context.Context, req *toolctx.Request, code errs.Code, err error) {
	if !g.health.failed() {
		return
	}
	if g.onError == nil {
		slog.Default().WarnContext(ctx, "toolmw: a guard's store failed; the failures until it answers again are counted, not logged",
			"guard", g.guard, "err", errs.Describe(err))
		return
	}
	g.send(ctx, req, code, err)
}

// answered notes that the store answered call req: when it ends an
// outage, the policy's OnError hears of it with a [*StoreOutage].
func (g *storeGuard) answered(ctx context.Context, req *toolctx.Request) {
	n, lasted, ended := g.health.answered()
	if !ended {
		return
	}
	outage := &StoreOutage{Guard: g.guard, Failures: n, Duration: lasted}
	if g.onError == nil {
		slog.Default().InfoContext(ctx, "toolmw: a guard's store answers again", "guard", g.guard,
			"failures", n, "duration", lasted)
		return
	}
	g.send(ctx, req, "", outage)
}

func (g *storeGuard) send(ctx context.Context, req *toolctx.Request, code errs.Code, err error) {
	var details toolctx.Details
	if req != nil {
		details = toolctx.DetailsOf(req)
	}
	o := options{}
	o.report(ctx, g.onError, NewDiagnosticEvent(details, code, err))
}
