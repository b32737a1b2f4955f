// Package errs is toolmw's error vocabulary: the stable codes a tool call can
// end with, the public [Error] a handler returns on purpose, [Normalizer] that
// turns any error into the public envelope a client may see, [PanicError] for
// recovered panics, and the registration errors [ToolNameError] and
// [ToolSchemaError].
// See docs/behaviour.md for what the caller sees and what the server keeps.
//
// The one rule of toolmw is that the audit row may name the cause and the
// caller may not. This package draws the line: an [*Error] has a public code,
// message and detail that cross to the client, and a private cause (reachable
// with [errors.Unwrap]) that never does. Every other error is raw: its text is
// kept on the server side and the client gets a generic message.
//
//	err := errs.NotFound("no such invoice").WithCause(sqlErr)
//	pub, scrubbed := errs.Normalize(err)
//	// pub.Code == errs.CodeNotFound, pub.Message == "no such invoice", scrubbed == false
//
//	pub, scrubbed = errs.Normalize(sqlErr)
//	// pub.Code == errs.CodeInternal, pub.Message == errs.GenericMessage, scrubbed == true
//
// Users map their own errors (sql.ErrNoRows to not found, say) with
// [Normalizer.Map], passed where a normalizer is configured; there is no
// global registry.
package errs
