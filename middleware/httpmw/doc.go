// Package httpmw is toolmw's HTTP side: constructors of
// func(http.Handler) http.Handler middleware for the streamable HTTP
// transport, composable with github.com/justinas/alice, in front of the
// SDK's handler. Package middleware holds the tool-call interceptors; this
// one holds only HTTP handlers.
//
//   - [Recover]: a panic outside any tool call becomes a generic 500; the
//     value and stack go to diagnostics.
//   - [RequestID]: an X-Request-Id for each request, into the context, the
//     tool Request and the audit rows.
//   - [Authenticate]: a verifier's identity into the context; expected
//     rejections are 401/403 with their public message, the verifier's own
//     failure a generic 503.
//   - [MaxBodyBytes]: a bound on request bodies (413).
//
// Every answer these layers write is a JSON-RPC error object with a null id,
// a code from package errs and a fixed or public message, never a raw
// error. Inside audit.HTTP, each answer reaches the HTTP row with its code
// and public message, and RequestID and Authenticate hand the row their id
// and identity.
//
// The response writer they wrap keeps exactly the optional interfaces of
// the server's (http.Flusher, http.Hijacker only where the server's writer
// has it) and has Unwrap, for http.ResponseController.
//
// The knobs follow package middleware's rules (its doc, "Knobs"): what a
// layer cannot work without is positional (the verifier, the body limit),
// the rest are functional options, and every mistake fails at
// construction: a nil verifier, a non-positive body limit, an option given
// nil. Each constructor takes options of its own type ([RecoverOption],
// [AuthenticateOption]; an [Option] is both), so an option given to a
// constructor it does not apply to does not compile. A nil option is
// skipped.
//
// The recommended order, outermost first:
//
//	alice.New(
//		httpmw.Recover(httpmw.WithDiagnostics(diag)),
//		httpmw.RequestID,
//		audit.HTTP(w),
//		httpmw.Authenticate(verify, httpmw.WithDiagnostics(diag)),
//		httpmw.MaxBodyBytes(1<<20),
//	).Then(mcpHandler)
package httpmw
