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
// method (or Map) blocks, recurses past [MaxNormalizeTime] or calls
// runtime.Goexit, Normalize gives up on it: the call is an internal failure
// (rule 5) whose raw cause is the error itself; when the method that blocks
// is its Unwrap (or Error), [Describe], which the audit row and the log line
// record, says so ("!(T: rendering it did not return within 1s)"). The
// goroutine of a method that blocks is left behind.
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
	return n.normalize(err, true)
}

// NormalizeCall is Normalize for an error of the call whose context is
// ctx: rule 4 applies only when ctx has ended (cancelled, or its deadline
// passed, read from the clock rather than from ctx.Err(), which a late
// timer sets late). While the call is live, a context error is a raw
// failure: scrubbed, so the client gets the generic message and the server
// side (diagnostics, the audit row) gets the raw text.
func (n Normalizer) NormalizeCall(ctx context.Context, err error) (pub Public, scrubbed bool) {
	return n.normalize(err, ctx == nil || ctxend.Err(ctx) != nil)
}

func (n Normalizer) normalize(err error, ended bool) (pub Public, scrubbed bool) {
	if err == nil {
		return Public{}, false
	}
	if errchain.Known(err) {
		return n.rules(err, ended)
	}
	type outcome struct {
		pub      Public
		scrubbed bool
	}
	o, ok := errchain.Within(func() outcome {
		pub, scrubbed := n.rules(err, ended)
		return outcome{pub, scrubbed}
	})
	if !ok {
		// An Unwrap, Is or As method (or Map) blocked or called
		// runtime.Goexit: nothing public can be read from err.
		return n.generic(), true
	}
	return o.pub, o.scrubbed
}

// rules applies the rules of [Normalizer] to a non-nil err, which is
// [errchain.Known] or walked inside [errchain.Within]: either way, its
// walks need no bound of their own.
func (n Normalizer) rules(err error, ended bool) (pub Public, scrubbed bool) {
	if pe, _ := errchain.AsKnown[*PanicError](err); pe != nil {
		return n.generic(), true
	}
	if e, ok := errchain.AsKnown[*Error](err); ok && e != nil {
		return e.Public(), false
	}
	if n.Map != nil {
		if m := n.mapped(err); m != nil {
			return m.Public(), false
		}
	}
	if ended {
		switch {
		case errchain.IsKnown(err, context.Canceled):
			return Public{Code: CodeCanceled, Message: CodeCanceled.DefaultMessage()}, false
		case errchain.IsKnown(err, context.DeadlineExceeded):
			return Public{Code: CodeTimeout, Message: CodeTimeout.DefaultMessage()}, false
		}
	}
	return n.generic(), true
}

// mapped is n.Map(err), with a panic counting as nil.
func (n Normalizer) mapped(err error) (m *Error) {
	safecall.Call(func() { m = n.Map(err) }, nil) // a panic leaves m nil
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
