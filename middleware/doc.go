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
// # Knobs
//
// Every constructor of toolmw (here, in middleware/httpmw and
// middleware/otelmw, in audit, in toolctx and the adapters) takes its
// settings in one of three kinds, each with one rule, and what nil means
// follows from the kind:
//
//   - Positional: what the constructor cannot work without, and nothing
//     else: the hook of [After] and [Diagnostics], the emitter of
//     audit.Interceptor and audit.HTTP, the sink of audit.NewAsync, the
//     verifier of httpmw.Authenticate, the duration of [Timeout], the limit
//     of [MaxArgBytes], the handler of [Chain.Then]. A positional value
//     has no default: nil (a nil hook, handler, emitter or sink) or a value
//     out of range (a zero or negative duration or limit) is a mistake.
//   - A Config struct, named XConfig after its constructor (Config when
//     the package has one constructor, as sqlstore.Config), passed by
//     value: a guard or a writer with several settings that all have
//     defaults ([BulkheadConfig], [RetryConfig], audit.AsyncConfig). (toolctx's
//     ProgressOptions and LogOptions are not settings: each is the one
//     argument of a call.) The zero value
//     of every field is its documented default, so the zero struct is the
//     default configuration; a nil function field (a Key, Retryable) is
//     its documented default too. Any other value outside the range the
//     field documents is a mistake: a negative duration, size or count
//     (unless the field documents what a negative one means, as
//     audit.AsyncConfig.MaxRetries does), an unknown enum value. A field
//     with no sensible default says it is required ([CacheConfig.TTL]),
//     and its zero value is a mistake.
//   - A functional option (WithX, variadic after the positional values):
//     a setting most callers leave alone, with a default the option's doc
//     names. A nil Option asks for nothing and is skipped, as a nil
//     interceptor given to [New] or [Chain.Append] is, so a list can be
//     built from optional parts. An option given a value it cannot use
//     (nil where it exists to set something, as WithFallbackLogger(nil), or
//     a value out of range) is a mistake: to get the default, leave the
//     option out. An option of one constructor cannot be given to another
//     where they differ: each constructor's options have their own type
//     (httpmw.RecoverOption, httpmw.AuthenticateOption).
//
// A mistake fails at construction, never at the first call and never
// silently, with a message that names the constructor and what was wrong.
// A constructor that returns an error ([Chain.Then], [Chain.ThenFunc],
// otelmw.New, the adapters' AddTool) returns it; every other one panics
// with it, as regexp.MustCompile does: "middleware.After: the hook is nil",
// "middleware.After: WithFallbackLogger(nil): ...". An option never fails
// by itself: the constructor it is given to reports its mistake. A
// [toolctx.Middleware] cannot return an error: [Chain.Middleware]'s
// panics, with an error wrapping [toolctx.ErrNilHandler], when an adapter applies
// it to a nil handler.
package middleware
