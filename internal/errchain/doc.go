// Package errchain walks an error's chain (through Unwrap() error and
// Unwrap() []error, honouring Is and As methods) the way errors.Is and
// errors.As do, with two differences that matter on the failure path of a
// tool call, where the error is whatever a handler returned:
//
//   - the walk terminates: it goes at most [MaxDepth] errors deep and
//     visits at most [MaxNodes] errors in all, so a cyclic Unwrap chain (an
//     error whose Unwrap returns itself, or a Join that contains its own
//     wrapper) ends that branch of the walk instead of hanging the call;
//   - it never panics: an Unwrap, Is or As method that panics counts as
//     "no further error", "no match" and "no match";
//   - it returns: As and Is give up on a method that blocks, after
//     [MaxTime], and count it as no match (see [Known]).
//
// Its recover sites are its own, not internal/safecall's: a ground package
// imports no other, and each turns a panic of the error's own method into
// "no match" silently, on a walk errs.Normalize runs for every failure,
// where there is no logger to report to (the caller reports the error).
//
// It is generic over the target type, so looking for a concrete type
// neither reflects nor allocates (errors.As takes its target as an any,
// which escapes to the heap on every call).
package errchain
