// Package httpmw is toolmw's HTTP side: func(http.Handler) http.Handler
// middleware for the HTTP transports, in front of the SDK's handler. See
// docs/serving.md.
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
// Every answer these layers write is a JSON-RPC error object with a public
// message, never a raw error. The recommended order, outermost first:
//
//	alice.New(
//		httpmw.Recover(httpmw.WithDiagnostics(diag)),
//		httpmw.RequestID,
//		audit.HTTP(w),
//		httpmw.Authenticate(verify, httpmw.WithDiagnostics(diag)),
//		httpmw.MaxBodyBytes(1<<20),
//	).Then(mcpHandler)
//
// Each constructor takes options of its own type ([RecoverOption],
// [AuthenticateOption]; an [Option] is both), so an option given to a
// constructor it does not apply to does not compile.
package httpmw
