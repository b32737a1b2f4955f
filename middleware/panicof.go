package middleware

import "github.com/toolmw/toolmw/errs"

// panicOf returns the *errs.PanicError in err's chain, or nil. It is
// errors.As without reflection: errors.As makes its target escape to the
// heap, one allocation on every failed call that reaches Diagnostics.
func panicOf(err error) *errs.PanicError {
	for err != nil {
		if pe, ok := err.(*errs.PanicError); ok {
			return pe
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			var pe *errs.PanicError
			if x.As(&pe) {
				return pe
			}
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range x.Unwrap() {
				if pe := panicOf(inner); pe != nil {
					return pe
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}
