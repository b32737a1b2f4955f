package middleware

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/toolmw/toolmw/toolctx"
)

// NoteWouldReject is the note a guard in observe mode ([Observe]) writes
// on a call it would have rejected or changed: its name, one of
// "rate_limit" ([RateLimit]), "bulkhead" ([Bulkhead]), "max_arg_bytes"
// ([MaxArgBytes]), "max_result_bytes" ([MaxResultBytes]),
// "require_scopes" ([RequireScopes]) and "scrub_secrets"
// ([ScrubSecrets]). A call two observed guards would have stopped has
// two such notes.
const NoteWouldReject = "would_reject"

// wouldPrefix prefixes the notes an observed guard would have written on
// the result it would have returned ("would_scrubbed",
// "would_truncated_from_bytes", "would_result_bytes").
const wouldPrefix = "would_"

// Observe runs guard in observe mode: the guard decides every call as
// usual, but a call it would reject runs as if it were absent, and a
// result it would change is sent unchanged; the call's result gets the
// note [NoteWouldReject] with the guard's name, for the audit row and
// otelmw's counter. It is the one way to roll a guard out, the same for
// every guard:
//
//	middleware.Observe(middleware.RateLimit(cfg))                 // one guard
//	middleware.Observe(middleware.New(scopes, size).Middleware()) // several
//	middleware.When(middleware.Tools("deploy"), middleware.Observe(scopes))
//
// What each guard does in observe mode:
//
//   - [RateLimit] takes a token from a call it admits, as usual; a call
//     over the rate takes none (as when it is rejected) and runs.
//   - [Bulkhead] never makes a call wait: a call that finds no free slot is
//     noted at once and runs without one, so it does not count against the
//     others (as when it is rejected). With MaxWait, some of the calls
//     noted would have had a slot within the wait: the note counts the
//     calls that would have waited or been rejected.
//   - [MaxArgBytes] and [RequireScopes] note the call and run it. A tool
//     list filtered with [Visibility] of the observed guard shows every
//     tool (ScopePolicy.Allows does not know of observe mode: it hides).
//   - [MaxResultBytes] and [ScrubSecrets] look at the result as usual and
//     send it as the handler made it; the notes they would have written
//     are kept with the prefix "would_" ("would_scrubbed" with the rules
//     that matched, never the secret; "would_truncated_from_bytes",
//     "would_result_bytes" with the size).
//
// Observe changes only what a guard decides, not what it is: a guard's
// configuration mistakes still panic at construction, a cancelled call
// still ends as canceled. Interceptors that are not guards (Cache,
// Timeout, Retry, ...) behave as usual inside Observe, and so does
// everything inside the guard: the handler and the interceptors guard
// wraps never see observe mode. Outside observe mode a guard's cost is
// unchanged; inside, a call costs two small allocations more. A nil guard
// panics, at construction.
func Observe(guard toolctx.Middleware) toolctx.Middleware {
	if guard == nil {
		panic("middleware.Observe: the guard is nil")
	}
	return func(next toolctx.Handler) toolctx.Handler {
		g := guard(observeInner{next: next})
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			o := &observing{}
			o.on.Store(true)
			return g.CallTool(context.WithValue(ctx, observeKey{}, o), req)
		})
	}
}

// observeKey is the context key of the *observing of a call inside
// [Observe].
type observeKey struct{}

// observing is one call's observe mode: on while the call is in the
// observed guards' own code, off while it is in what they wrap.
type observing struct{ on atomic.Bool }

// observeInner is what the observed guards wrap: observe mode is off
// while the call is in it.
type observeInner struct{ next toolctx.Handler }

func (h observeInner) CallTool(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	o, _ := ctx.Value(observeKey{}).(*observing)
	if o != nil {
		o.on.Store(false)
		defer o.on.Store(true) // back in the guards' code: post-handler guards decide there
	}
	return h.next.CallTool(ctx, req)
}

// inObserveMode reports whether a guard deciding in ctx is in observe
// mode. Guards ask it only when they are about to reject or change a
// call, so that the admitted path costs nothing more.
func inObserveMode(ctx context.Context) bool {
	o, _ := ctx.Value(observeKey{}).(*observing)
	return o != nil && o.on.Load()
}

// reject is what a guard before the handler returns for a call it
// rejects with rejection: the rejection, or, in observe mode, next's
// result for the call, noted with the guard's name.
func reject(ctx context.Context, guard string, rejection *toolctx.CallResult, next toolctx.Handler, req *toolctx.Request) *toolctx.CallResult {
	if !inObserveMode(ctx) {
		return rejection
	}
	return next.CallTool(ctx, req).WithNote(NoteWouldReject, guard)
}

// replace is what a guard after the handler returns when it would send
// out instead of the handler's res: out, or, in observe mode, res noted
// with the guard's name and the notes out has that res has not, prefixed
// "would_".
func replace(ctx context.Context, guard string, res, out *toolctx.CallResult) *toolctx.CallResult {
	if out == res || !inObserveMode(ctx) {
		return out
	}
	noted := res.WithNote(NoteWouldReject, guard)
	had := res.Notes()
	for _, n := range out.Notes() {
		if !slices.Contains(had, n) {
			noted = noted.WithNote(wouldPrefix+n.Key, n.Value)
		}
	}
	return noted
}

// The guards' names in [NoteWouldReject].
const (
	guardRateLimit      = "rate_limit"
	guardBulkhead       = "bulkhead"
	guardMaxArgBytes    = "max_arg_bytes"
	guardMaxResultBytes = "max_result_bytes"
	guardRequireScopes  = "require_scopes"
	guardScrubSecrets   = "scrub_secrets"
)

// keepNotes returns out, a result a guard builds to replace res, carrying
// res's notes before its own: what the interceptors inside noted (an
// observed guard's would_reject, a retry's attempts, a cache's miss)
// still reaches the row when a guard outside them replaces the result.
func keepNotes(res, out *toolctx.CallResult) *toolctx.CallResult {
	for _, n := range res.Notes() {
		out = out.WithNote(n.Key, n.Value)
	}
	return out
}
