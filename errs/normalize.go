package errs

import (
	"context"

	"github.com/toolmw/toolmw/internal/ctxend"
	"github.com/toolmw/toolmw/internal/errchain"
	"github.com/toolmw/toolmw/internal/safecall"
)

// Normalizer turns any error into the public envelope a client may see. The
// zero value is ready to use and is what [Normalize] applies.
//
// The rules, in order:
//  1. a [*PanicError] anywhere in the chain gives [CodeInternal] with the
//     generic message (scrubbed), whatever the panic value was;
//  2. an [*Error] anywhere in the chain (through %w, errors.Join or any
//     Unwrap) gives its public fields; its cause stays private;
//  3. Map, when set and it returns non-nil, gives that *Error's public
//     fields;
//  4. [context.Canceled] gives [CodeCanceled], [context.DeadlineExceeded]
//     gives [CodeTimeout], each with its default message, when the call's
//     context has ended (see [Normalizer.NormalizeCall]): a context error
//     the call's own context does not explain (a handler's inner timeout
//     while the call is live) is a raw failure, rule 5;
//  5. anything else gives [CodeInternal] with the generic message (scrubbed).
//
// The walk through the chain terminates and never panics: a cyclic Unwrap
// chain is followed for a bounded number of errors, and an Unwrap, Is or As
// method that panics counts as no match. It also returns: an error whose
// chain holds a type that is neither the standard library's nor toolmw's is
// normalized on a goroutine of its own, and when its Unwrap, Is or As
// method (or Map) blocks past [MaxNormalizeTime], calls runtime.Goexit or
// recurses (normalizes its own error, say), Normalize gives up on it: the
// call is an internal failure (rule 5), and [Normalizer.NormalizeCause]
// returns a [*GaveUpError] as the cause to record, which names the method
// that did not return, so that the audit row and the log line say why. The
// goroutine of a method that blocks is left behind. Errors of known types,
// the common case, are normalized on the caller's goroutine, without a
// timer.
type Normalizer struct {
	// Map maps the user's own errors to public ones, for example
	// sql.ErrNoRows to errs.NotFound("no such row"). It returns nil for
	// errors it does not know. A panic in Map is recovered and counts as
	// nil: the error is scrubbed, as an unmapped one is, and the panic goes
	// no further (adapters normalize outside the chain's Recover).
	Map func(error) *Error
	// GenericMessage replaces [GenericMessage] for scrubbed errors.
	GenericMessage string
}

// Normalize returns the public envelope of err and whether the raw message
// was scrubbed, that is, replaced by the generic message because it is not
// public. A nil err gives a zero Public and false.
//
// Normalize knows nothing of the call err came from: it applies rule 4 to
// any context error, as if the call's context had ended. Code that has the
// call's context uses [Normalizer.NormalizeCall] (toolctx and the adapters
// do).
func (n Normalizer) Normalize(err error) (pub Public, scrubbed bool) {
	pub, scrubbed, _ = n.normalize(err, true)
	return pub, scrubbed
}

// NormalizeCall is Normalize for an error of the call whose context is
// ctx: rule 4 applies only when ctx has ended (cancelled, or its deadline
// passed, read from the clock rather than from ctx.Err(), which a late
// timer sets late). While the call is live, a context error is a raw
// failure: scrubbed, so the client gets the generic message and the server
// side (diagnostics, the audit row) gets the raw text.
func (n Normalizer) NormalizeCall(ctx context.Context, err error) (pub Public, scrubbed bool) {
	pub, scrubbed, _ = n.NormalizeCause(ctx, err)
	return pub, scrubbed
}

// NormalizeCause is [Normalizer.NormalizeCall], and also returns the cause
// a failure of err records on the server side (the audit row, diagnostics):
// err itself, or, when Normalize gave up on err because a method of its
// chain did not return, a [*GaveUpError] that says which and holds err. A
// nil ctx counts as ended, as for NormalizeCall. toolctx.Normalized keeps
// that cause in the result.
func (n Normalizer) NormalizeCause(ctx context.Context, err error) (pub Public, scrubbed bool, cause error) {
	return n.normalize(err, ctx == nil || ctxend.Err(ctx) != nil)
}

func (n Normalizer) normalize(err error, ended bool) (pub Public, scrubbed bool, cause error) {
	if err == nil {
		return Public{}, false, nil
	}
	if e, ok := err.(*Error); ok && e != nil && e.cause == nil {
		// The common public failure needs no walk: its methods are this
		// package's, and the rules below would find it first (Known's walk
		// and theirs were a tenth of the chain's cost on it).
		return e.Public(), false, err
	}
	if errchain.Known(err) {
		pub, scrubbed = n.rules(nil, err, ended)
		return pub, scrubbed, err
	}
	return n.bounded(err, ended)
}

// rules applies the rules of [Normalizer] to a non-nil err, as part of w's
// walk (nil: on the caller's goroutine, for a chain already found
// [errchain.Known], so that its walks do not ask Known again).
func (n Normalizer) rules(w *errchain.Walker, err error, ended bool) (pub Public, scrubbed bool) {
	if pe, _ := errchain.AsIn[*PanicError](w, err); pe != nil {
		return n.generic(), true
	}
	if e, ok := errchain.AsIn[*Error](w, err); ok && e != nil {
		return e.Public(), false
	}
	if n.Map != nil {
		w.Enter("Map", err)
		if m := n.mapped(err); m != nil {
			return m.Public(), false
		}
	}
	if ended {
		switch {
		case errchain.IsIn(w, err, context.Canceled):
			return Public{Code: CodeCanceled, Message: CodeCanceled.DefaultMessage()}, false
		case errchain.IsIn(w, err, context.DeadlineExceeded):
			return Public{Code: CodeTimeout, Message: CodeTimeout.DefaultMessage()}, false
		}
	}
	return n.generic(), true
}

// mapped is n.Map(err), with a panic counting as nil (but a recursion
// through Normalize goes on, to the walk that gives up on it).
func (n Normalizer) mapped(err error) (m *Error) {
	safecall.Call(func() { m = n.Map(err) }, func(f safecall.Fault) { errchain.RepanicRecursion(f.Value) }) // a panic leaves m nil
	return m
}

func (n Normalizer) generic() Public {
	msg := n.GenericMessage
	if msg == "" {
		msg = GenericMessage
	}
	return Public{Code: CodeInternal, Message: msg}
}

// MaxNormalizeTime is how long [Normalizer.Normalize] waits for the methods
// of an error of a type it does not know before it gives up on them.
const MaxNormalizeTime = errchain.MaxTime

// Normalize is Normalizer{}.Normalize(err): the default rules with no
// mapping of the user's errors.
func Normalize(err error) (pub Public, scrubbed bool) {
	return Normalizer{}.Normalize(err)
}

// CodeOf returns the code a client would see for err under the default
// rules, and [CodeInternal] for nil.
func CodeOf(err error) Code {
	if err == nil {
		return CodeInternal
	}
	pub, _ := Normalize(err)
	return pub.Code
}
