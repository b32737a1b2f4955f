// Package middleware composes toolmw interceptors around tool handlers and
// provides the core ones.
//
// A [Chain] has the semantics of github.com/justinas/alice:
// New(m1, m2, m3).Then(h) is m1(m2(m3(h))), so the first interceptor is the
// outermost. The recommended order, outermost first, is audit (one row per
// call, panics included), [Diagnostics] (the raw cause of unexpected failures
// to the operator), [Normalize] (the public envelope for the client) and
// [Recover] (a panic becomes a failure, the server keeps running); the
// package's Example_recommendedOrder runs exactly that chain:
//
//	chain := middleware.New(
//		audit.Interceptor(rows),                 // one row per call, panics included
//		middleware.Diagnostics(report),          // raw cause of unexpected failures to the operator
//		middleware.Normalize(errs.Normalizer{}), // public envelope for the client
//		middleware.Recover,                      // a panic becomes a failure, the server keeps running
//	)
//
// Recover sits closest to the handler so that the interceptors outside it
// see a panic as an ordinary failed result; the adapters add a last-resort
// recover of their own around the whole chain.
//
// Hooks (Diagnostics, After) receive the call's context and one options
// struct, so new fields never break them; both reach the raw cause the same
// way, with a Cause method, and a panic's value and stack with
// [errs.PanicOf]. A hook that panics never changes the response: the panic
// is caught and reported once to the fallback *slog.Logger
// ([WithFallbackLogger]).
//
// # Observe mode
//
// Every guard ([RateLimit], [Bulkhead], [MaxArgBytes], [MaxResultBytes],
// [RequireScopes], [ScrubSecrets]) can be rolled out in observe mode first,
// one way for all: wrap it with [Observe]. The guard decides each call as
// usual; a call it would reject runs as if it were absent, a result it
// would change is sent as the handler made it, and the result carries the
// note "would_reject" with the guard's name ([NoteWouldReject]), which the
// audit row records and otelmw counts (toolmw.guard.would_reject). A guard
// notes only what it decides: what it wraps is not in observe mode.
//
// # Construction mistakes
//
// One policy holds for every constructor of toolmw (here, in toolctx and in
// audit): a nil where a value is required (a hook, a handler, a matcher, an
// interceptor, an emitter, a sink) or a value out of range (a non-positive
// duration) is a mistake in the program, and fails at construction, never
// at the first call and never silently. A constructor that returns an
// error ([Chain.Then], [Chain.ThenFunc]) returns one naming what was wrong;
// every other constructor panics with a message naming it ("middleware.After:
// the hook is nil"). A nil Option in a list of options is skipped, and a
// nil interceptor given to [New] or [Chain.Append] is skipped, so that a
// chain can be assembled from optional parts.
package middleware
