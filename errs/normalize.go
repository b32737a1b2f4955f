package errs

import (
	"context"
	"errors"
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
//     gives [CodeTimeout], each with its default message;
//  5. anything else gives [CodeInternal] with the generic message (scrubbed).
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
func (n Normalizer) Normalize(err error) (pub Public, scrubbed bool) {
	if err == nil {
		return Public{}, false
	}
	if _, ok := asType[*PanicError](err); ok {
		return n.generic(), true
	}
	if e, ok := asType[*Error](err); ok && e != nil {
		return e.Public(), false
	}
	if n.Map != nil {
		if m := n.mapped(err); m != nil {
			return m.Public(), false
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Public{Code: CodeCanceled, Message: CodeCanceled.DefaultMessage()}, false
	case errors.Is(err, context.DeadlineExceeded):
		return Public{Code: CodeTimeout, Message: CodeTimeout.DefaultMessage()}, false
	}
	return n.generic(), true
}

// mapped is n.Map(err), with a panic counting as nil.
func (n Normalizer) mapped(err error) (m *Error) {
	defer func() {
		if recover() != nil {
			m = nil
		}
	}()
	return n.Map(err)
}

func (n Normalizer) generic() Public {
	msg := n.GenericMessage
	if msg == "" {
		msg = GenericMessage
	}
	return Public{Code: CodeInternal, Message: msg}
}

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
