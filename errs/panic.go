package errs

import (
	"errors"
	"runtime"

	"github.com/toolmw/toolmw/internal/errchain"
)

// PanicError is a recovered panic. Value is what was passed to panic and
// Stack the goroutine's stack where it was recovered.
//
// Error has the value and never the stack: the stack is for diagnostics
// hooks, not for audit rows or logs that keep every line. A PanicError is
// always scrubbed by [Normalizer], even when the value is an [*Error].
type PanicError struct {
	Value any
	Stack []byte
}

// NewPanicError returns a PanicError for value with the current goroutine's
// stack. Call it from the deferred function that recovered.
func NewPanicError(value any) *PanicError {
	return &PanicError{Value: value, Stack: stack()}
}

// stack is debug.Stack with a larger first buffer. debug.Stack starts at
// 1 KiB and doubles, formatting the whole traceback again each time; a
// panic inside a chain of interceptors has a stack of a few KiB, so it
// formatted the traceback three times. Formatting dominates the cost of a
// panic.
func stack() []byte {
	buf := make([]byte, 8<<10)
	for {
		n := runtime.Stack(buf, false)
		if n < len(buf) {
			return buf[:n:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Error returns "panic: " and the value as [Describe] renders it (an
// [*Error] value with its private cause: a PanicError is raw, always
// scrubbed). It never panics, whatever the value's methods do, and never
// holds the stack.
func (p *PanicError) Error() string {
	if p == nil {
		return "panic: <nil *errs.PanicError>"
	}
	return "panic: " + Describe(p.Value)
}

// Unwrap returns the panic value when it is an error, so errors.Is sees
// through it (to a runtime.Error, say).
func (p *PanicError) Unwrap() error {
	if p == nil {
		return nil
	}
	err, _ := p.Value.(error)
	return err
}

// PanicOf returns the *PanicError in err's chain (through %w, errors.Join
// and any Unwrap), or nil. It is how a diagnostics or audit hook reaches a
// panic's value and stack from a call's cause, and the one function toolmw
// uses to tell a panic from an error. Unlike errors.As it always
// terminates (a cyclic Unwrap chain is followed a bounded number of steps),
// never panics (an Unwrap or As method that panics is no match) and skips
// a typed nil *PanicError.
func PanicOf(err error) *PanicError {
	pe, _ := errchain.As[*PanicError](err)
	return pe
}

// ErrGoexit is the [PanicError.Value] of a call whose goroutine called
// runtime.Goexit (what t.FailNow does in a test helper): the call ends as
// an internal failure, as a panic does, with the stack where the Goexit
// was seen, and the server keeps serving.
var ErrGoexit = errors.New("runtime.Goexit was called during the tool call")
