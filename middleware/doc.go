// Package middleware composes toolmw's interceptors around tool handlers
// and provides the core ones and the guards. See docs/chain.md (the chain,
// hooks, writing interceptors) and docs/guards.md (guards, resilience,
// observe mode).
//
// A [Chain] has the semantics of github.com/justinas/alice:
// New(m1, m2, m3).Then(h) is m1(m2(m3(h))), so the first interceptor is the
// outermost. The recommended order, outermost first (Example_recommendedOrder):
//
//	chain := middleware.New(
//		audit.Interceptor(rows),                 // one row per call, panics included
//		middleware.Diagnostics(report),          // raw cause of unexpected failures to the operator
//		middleware.Normalize(errs.Normalizer{}), // public envelope for the client
//		middleware.Recover,                      // a panic becomes a failure, the server keeps running
//	)
//
// Hooks ([Diagnostics], [After]) receive the call's context and one options
// struct; a hook that panics never changes the response. Every guard can be
// rolled out in observe mode first: wrap it with [Observe].
//
// Settings follow one rule per kind: what a constructor cannot work without
// is positional, a guard with several settings takes a Config struct whose
// zero value is the documented default, and the rest are WithX options. A
// mistake (a nil hook, a value out of range, an option given nil) fails at
// construction with a message naming the constructor: a constructor that
// returns an error returns it, the others panic with it. The whole rule,
// kind by kind, is in docs/chain.md#knobs.
package middleware
