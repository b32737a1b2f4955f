package middleware

import (
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
)

// panicError is the *errs.PanicError of a fault: errs.ErrGoexit for a
// runtime.Goexit; for a panic, its value, kept as it is when it already is
// one (a panic re-raised by code that recovered it), with its stack.
func panicError(f safecall.Fault) *errs.PanicError {
	if f.Goexit {
		return errs.NewPanicError(errs.ErrGoexit)
	}
	if pe, ok := f.Value.(*errs.PanicError); ok && pe != nil {
		return pe
	}
	return errs.NewPanicError(f.Value)
}
