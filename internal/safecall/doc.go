// Package safecall calls code toolmw does not own (a hook, a sink, an
// emitter, a redactor, a key function, a handler below an interceptor) so
// that a panic in it is stopped or observed in one way everywhere, and a
// runtime.Goexit in it is noticed and reported instead of passing unseen.
//
// [Call] stops a panic; [Observe] sees it and lets it go on (for an
// interceptor that records a failure and leaves the recovering to
// middleware.Recover or the adapter); [Scope] is both in the deferred
// form, for the interceptors around every call, whose frames would
// otherwise lengthen the stack of every panic below them; [Reporter]
// reports a [Fault] once to the fallback logger.
//
// Neither can stop a runtime.Goexit: no deferred function can. A Goexit is
// handed to the fault function and then ends the goroutine, as it would
// have. The adapters run the whole chain on a coroutine of their own
// (package internal/contain), so a Goexit below them ends that coroutine,
// not the SDK's goroutine, and the call is answered with the generic
// failure. Containing a Goexit takes a goroutine or a coroutine per call,
// which the hot path of a hook cannot pay for.
//
// The fault function runs in the deferred call, while the frames of the
// code that panicked are still on the stack: it is where a stack is
// captured (errs.NewPanicError).
//
// safecall is a ground package: it imports nothing of toolmw's, so the
// caller passes how a panic value is described ([Reporter.Describe], which
// is errs.Describe everywhere in toolmw).
package safecall
