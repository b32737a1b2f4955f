package safecall

import (
	"context"
	"fmt"
	"log/slog"
)

// Fault is how a call ended without returning: a panic, whose value is
// Value, or a runtime.Goexit.
type Fault struct {
	// Value is what recover returned: the panic value (a
	// *runtime.PanicNilError for panic(nil)). It is nil for a Goexit.
	Value any
	// Goexit is set when the call called runtime.Goexit (what t.FailNow
	// does in a test double). A Goexit cannot be stopped.
	Goexit bool
}

// Call calls f and reports whether it returned. When f panics, Call calls
// onFault (when not nil) with the panic, stops the panic and returns the
// fault and false. When f calls runtime.Goexit, Call calls onFault with
// the Goexit, which then goes on: Call does not return.
//
// onFault runs in Call's deferred function, while f's frames are still on
// the stack (the place to capture it). It may panic; that panic is the
// caller's, as any panic of a deferred function is.
//
// Call allocates nothing: f and onFault do not escape.
func Call(f func(), onFault func(Fault)) (fault Fault, ok bool) {
	returned := false
	defer func() {
		if returned {
			return
		}
		// recover returns nil only for a Goexit: panic(nil) recovers as
		// a *runtime.PanicNilError since Go 1.21 (unless the program runs
		// with GODEBUG=panicnil=1, which makes a panic(nil) look like a
		// Goexit here).
		v := recover()
		fault = Fault{Value: v, Goexit: v == nil}
		if onFault != nil {
			onFault(fault)
		}
	}()
	f()
	returned = true
	return Fault{}, true
}

// Observe calls f. When f panics or calls runtime.Goexit, Observe calls
// onFault (when not nil) with it, and then the panic goes on with the same
// value, or the Goexit goes on: Observe is for code that records a failure
// on its way through and leaves stopping it to code outside.
//
// onFault runs while f's frames are still on the stack, as in [Call].
func Observe(f func(), onFault func(Fault)) {
	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover() // nil only for a Goexit, as in Call
		if onFault != nil {
			onFault(Fault{Value: v, Goexit: v == nil})
		}
		if v != nil {
			panic(v)
		}
	}()
	f()
	returned = true
}

// Reporter reports faults of code toolmw calls. The zero Reporter logs to
// slog.Default() and names a panic value by its type only.
type Reporter struct {
	// Logger is where a fault goes: the fallback logger. Nil means
	// slog.Default() at the time of the report.
	Logger *slog.Logger
	// Describe renders a panic value for the report; it must not panic
	// (toolmw passes errs.Describe, which never does). Nil means the
	// value's type, which calls none of its methods.
	Describe func(any) string
}

// Report logs f once, at level Error: msg, the attribute "panic" (the
// described value, or "runtime.Goexit"), then attrs.
//
// A logger whose handler panics while reporting is ignored: there is
// nowhere left to report to, and the report must not turn a stopped panic
// into a new one.
func (r Reporter) Report(ctx context.Context, msg string, f Fault, attrs ...slog.Attr) {
	l := r.Logger
	if l == nil {
		l = slog.Default()
	}
	what := "runtime.Goexit"
	if !f.Goexit {
		if r.Describe != nil {
			what = r.Describe(f.Value)
		} else {
			what = fmt.Sprintf("%T", f.Value)
		}
	}
	all := make([]slog.Attr, 0, 1+len(attrs))
	all = append(append(all, slog.String("panic", what)), attrs...)
	Call(func() { l.LogAttrs(ctx, slog.LevelError, msg, all...) }, nil)
}

// Call calls f as [Call] does, and reports a panic or a Goexit in it with
// [Reporter.Report], as msg with attrs. It returns whether f returned.
//
// attrs is a function, called only on a fault, so that a caller's
// attributes cost nothing when f returns; it may be nil.
func (r Reporter) Call(ctx context.Context, msg string, f func(), attrs func() []slog.Attr) bool {
	_, ok := Call(f, func(fault Fault) {
		var extra []slog.Attr
		if attrs != nil {
			extra = attrs()
		}
		r.Report(ctx, msg, fault, extra...)
	})
	return ok
}

// Scope is [Call] and [Observe] in the deferred form, for code that runs
// around every tool call (an interceptor's own frame): where Call and
// Observe add two frames to the stack of every panic below them, which
// errs.NewPanicError formats, a Scope adds none. Declare one, defer its
// Stop or Observe, and mark the end of the guarded code with Returned:
//
//	var s safecall.Scope
//	defer s.Stop(onFault)
//	res = next.CallTool(ctx, req)
//	s.Returned()
//
// Code that returns before Returned is seen as a Goexit: keep the guarded
// code a straight line.
type Scope struct{ returned bool }

// Returned marks the guarded code as having returned.
func (s *Scope) Returned() { s.returned = true }

// Stop, deferred, is [Call] for the code between the defer and Returned:
// a panic is handed to onFault and stopped (the function returns its
// named results as they are then, onFault may set them), a Goexit is
// handed to onFault and goes on.
func (s *Scope) Stop(onFault func(Fault)) {
	if s.returned {
		return
	}
	v := recover() // nil only for a Goexit, as in Call
	if onFault != nil {
		onFault(Fault{Value: v, Goexit: v == nil})
	}
}

// Observe, deferred, is [Observe] for the code between the defer and
// Returned: a panic or a Goexit is handed to onFault and goes on.
func (s *Scope) Observe(onFault func(Fault)) {
	if s.returned {
		return
	}
	v := recover() // nil only for a Goexit, as in Call
	if onFault != nil {
		onFault(Fault{Value: v, Goexit: v == nil})
	}
	if v != nil {
		panic(v)
	}
}

// Handle, deferred, hands a panic or a Goexit of the guarded code to
// onFault, which says whether to stop it: a panic is stopped when onFault
// returns true and goes on with its value otherwise; a Goexit goes on
// either way. It is for guarded code in stages that end differently (an
// interceptor that observes the handler's panic and stops its hook's): one
// deferred call where two would cost more on every call. Stop and Observe
// are Handle with onFault's answer fixed.
func (s *Scope) Handle(onFault func(Fault) (stop bool)) {
	if s.returned {
		return
	}
	v := recover() // nil only for a Goexit, as in Call
	if !onFault(Fault{Value: v, Goexit: v == nil}) && v != nil {
		panic(v)
	}
}
