// Package middleware composes toolmw interceptors around tool handlers and
// provides the core ones.
//
// A [Chain] has the semantics of github.com/justinas/alice:
// New(m1, m2, m3).Then(h) is m1(m2(m3(h))), so the first interceptor is the
// outermost. The recommended order, outermost first, is
//
//	middleware.New(
//		audit,                      // one row per call, panics included
//		middleware.Diagnostics(d),  // raw cause of unexpected failures to the operator
//		middleware.Normalize(),     // public envelope for the client
//		middleware.Recover,         // a panic becomes a failure, the server keeps running
//	)
//
// Recover sits closest to the handler so that the interceptors outside it
// see a panic as an ordinary failed result; the adapters add a last-resort
// recover of their own around the whole chain.
//
// Hooks (Diagnostics, After) receive the call's context and one options
// struct, so new fields never break them. A hook that panics never changes
// the response: the panic is caught and reported once to a fallback
// *slog.Logger.
package middleware
