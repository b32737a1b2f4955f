package middleware

import "github.com/toolmw/toolmw/errs"

// panicError is the *errs.PanicError for a value recovered from a panic,
// or for a runtime.Goexit when goexit is set: a value that already is one
// (a panic re-raised by code that recovered it) is kept, with its stack.
func panicError(v any, goexit bool) *errs.PanicError {
	if goexit {
		return errs.NewPanicError(errs.ErrGoexit)
	}
	if pe, ok := v.(*errs.PanicError); ok && pe != nil {
		return pe
	}
	return errs.NewPanicError(v)
}
