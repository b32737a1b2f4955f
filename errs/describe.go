package errs

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolmw/toolmw/internal/errchain"
	"github.com/toolmw/toolmw/internal/safecall"
)

// Describe returns the text of v for the server side (an audit row, a log
// line, a diagnostics report): a raw error's Error text, an [*Error]'s
// public message with its private cause (as %+v prints it), a
// [*PanicError]'s "panic: " and value, any other value as %v prints it.
// The private cause of an *Error wrapped inside an error, which that
// error's text leaves out, is appended, as
// "load: no such invoice [cause of not_found: pq: ...]". Never send it to
// the client.
//
// A description longer than [MaxDescribeBytes] is cut, on a UTF-8
// boundary, to at most that many bytes ending in the marker
// "…[truncated N bytes]" (N the length it had), as audit.Limits cuts a
// row's fields: an Error method may return any amount of text, and a
// description goes into every log line and row that names the cause.
//
// Describe never panics, and returns even when a method of v calls
// runtime.Goexit or blocks: a value whose rendering panics (an Error, String
// or Format method that panics, a method on a nil pointer receiver), calls
// runtime.Goexit (t.FailNow in a test double) or has not returned after
// [MaxDescribeTime] (an Error that waits on a lock or a network) is
// described by a placeholder naming its type, so the record of a call is
// written whatever the handler returned or panicked with. Values whose
// rendering is known to be plain (strings, the errors of errors.New,
// fmt.Errorf and package context, runtime errors, and [*Error] and
// [*PanicError] around them) are rendered on the caller's goroutine; any
// other on a goroutine of its own, which is left behind when it blocks.
func Describe(v any) string {
	if plain(v, 0) {
		return cutDescription(describe(v, 0))
	}
	return cutDescription(describeBounded(v))
}

// MaxDescribeTime is how long [Describe] waits for a value's methods.
const MaxDescribeTime = time.Second

// describeBounded is describe(v, 0) on a goroutine of its own, for at most
// MaxDescribeTime.
//
// Called from a value's method while an outer call renders (an Error that
// describes its own error, or another's), it renders on the same
// goroutine, within the outer bound, and gives up when such calls nest
// deeper than a description inside a description does: each call would
// otherwise start a goroutine that starts the next, without end.
func describeBounded(v any) string {
	switch n := describeNesting(); {
	case n >= maxDescribeNesting:
		return fmt.Sprintf("!(%T: rendering it recursed through errs.Describe)", v)
	case n > 0:
		return describe(v, 0)
	}
	done := make(chan string, 1)
	go func() {
		var s string
		// describe stops every panic: only a Goexit is a fault here, and
		// it ends only this goroutine.
		if _, ok := safecall.Call(func() { s = describe(v, 0) }, func(f safecall.Fault) {
			if f.Goexit {
				done <- fmt.Sprintf("!(%T: rendering it called runtime.Goexit)", v)
			}
		}); ok {
			done <- s
		}
	}()
	t := time.NewTimer(MaxDescribeTime)
	defer t.Stop()
	select {
	case s := <-done:
		return s
	case <-t.C:
		return fmt.Sprintf("!(%T: rendering it did not return within %v)", v, MaxDescribeTime)
	}
}

// maxDescribeNesting is how deep calls of describeBounded may nest on one
// goroutine.
const maxDescribeNesting = 8

// describeBoundedName is the name of describeBounded, and the prefix of
// the functions it runs.
const describeBoundedName = "github.com/toolmw/toolmw/errs.describeBounded"

// describeNesting counts the frames of describeBounded (and of the
// goroutine it starts) on the calling goroutine's stack, its caller's own
// excepted: 0 outside any.
func describeNesting() int {
	pcs := make([]uintptr, 512)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	n := 0
	for {
		fr, more := frames.Next()
		if strings.HasPrefix(fr.Function, describeBoundedName) {
			n++
		}
		if !more {
			return n
		}
	}
}

// The types whose rendering plain knows to be safe.
var (
	wrapErrorType  = reflect.TypeOf(fmt.Errorf("%w", errors.New("")))
	wrapErrorsType = reflect.TypeOf(fmt.Errorf("%w%w", errors.New(""), errors.New("")))
	canceledType   = reflect.TypeOf(context.Canceled)
	deadlineType   = reflect.TypeOf(context.DeadlineExceeded)
)

// plain reports whether rendering v can neither block nor call
// runtime.Goexit: it is made only of types whose methods toolmw knows.
func plain(v any, depth int) bool {
	if depth > maxDescribeDepth {
		return false
	}
	switch x := v.(type) {
	case nil, string:
		return true
	case *Error:
		return x == nil || x.cause == nil || plain(x.cause, depth+1)
	case *PanicError:
		return x == nil || plain(x.Value, depth+1)
	case *GaveUpError:
		return true // its text was made when it was, and it wraps nothing
	case runtime.Error:
		return reflect.TypeOf(v).PkgPath() == "runtime" || (reflect.TypeOf(v).Kind() == reflect.Pointer && reflect.TypeOf(v).Elem().PkgPath() == "runtime")
	case error:
		if errchain.IsErrorString(x) {
			return true
		}
		switch reflect.TypeOf(v) {
		case canceledType, deadlineType:
			return true
		case wrapErrorType, wrapErrorsType:
			// Their text is made when they are; what they wrap is
			// walked for private causes.
			for _, e := range errchain.Unwrap(x) {
				if !plain(e, depth+1) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// MaxDescribeBytes is the most bytes [Describe] returns.
const MaxDescribeBytes = 8192

// cutDescription cuts s to MaxDescribeBytes (see Describe).
func cutDescription(s string) string {
	if len(s) <= MaxDescribeBytes {
		return s
	}
	m := "…[truncated " + strconv.Itoa(len(s)) + " bytes]"
	keep := MaxDescribeBytes - len(m)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return strings.Clone(s[:keep]) + m
}

// describe is Describe; depth bounds the description of a panic raised by
// a rendering (whose value may panic when rendered in turn).
func describe(v any, depth int) (s string) {
	if fault, ok := safecall.Call(func() { s = render(v, depth) }, nil); !ok {
		return placeholder(v, fault.Value, depth)
	}
	return s
}

// render is describe without the safety: the text of v, which may panic.
func render(v any, depth int) (s string) {
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case string:
		return x
	case *Error:
		return fmt.Sprintf("%+v", x)
	case *PanicError:
		return x.Error() // the value's description
	case error:
		s = x.Error()
		if strings.Contains(s, panicMark) {
			// A wrapper whose text was made by fmt while a wrapped
			// error's Error panicked: describe what it wraps.
			return s + wrapped(x, depth)
		}
		return s + privateCauses(x, depth)
	case fmt.Stringer:
		if _, ok := v.(fmt.Formatter); !ok {
			return x.String()
		}
	}
	s = fmt.Sprintf("%v", v)
	if strings.Contains(s, panicMark) {
		// fmt caught a panic in a String or Format method: say so in
		// the same words as for any other rendering that panicked.
		return fmt.Sprintf("!(%T: its Format or String method panicked: %s)", v, s)
	}
	return s
}

// placeholder describes v, whose rendering panicked with r.
func placeholder(v, r any, depth int) string {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return fmt.Sprintf("!(%T: nil pointer; rendering it panicked)", v)
	}
	if depth >= maxDescribeDepth {
		return fmt.Sprintf("!(%T: rendering it panicked)", v)
	}
	s := fmt.Sprintf("!(%T: rendering it panicked: %s)", v, describe(r, depth+1))
	if err, ok := v.(error); ok {
		// Describe what it wraps, whose text its own would have held (a
		// join with one bad member, say).
		s += wrapped(err, depth)
	}
	return s
}

// maxDescribeDepth bounds how deep a description goes into what a value
// wraps, and into the panics its rendering raised.
const maxDescribeDepth = 6

// panicMark is how fmt marks a panic it recovered in a method.
const panicMark = "(PANIC="

// wrapped describes what err wraps, as " wrapping [a; b]", or "".
func wrapped(err error, depth int) string {
	inner := errchain.Unwrap(err)
	if len(inner) == 0 || depth >= maxDescribeDepth {
		return ""
	}
	parts := make([]string, 0, len(inner))
	n := 0
	for _, e := range inner {
		if n > MaxDescribeBytes {
			break // cut by Describe anyway
		}
		if e != nil {
			parts = append(parts, describe(e, depth+1))
			n += len(parts[len(parts)-1])
		}
	}
	return " wrapping [" + strings.Join(parts, "; ") + "]"
}

// privateCauses describes the private causes of the *Errors in err's chain
// (below err itself), which err's text leaves out.
func privateCauses(err error, depth int) string {
	if depth >= maxDescribeDepth {
		return "" // a cause that wraps its own wrapper: enough
	}
	var b strings.Builder
	first := true
	errchain.Walk(err, func(e error) bool {
		pe, ok := e.(*Error)
		if first || !ok {
			first = false
			return b.Len() <= MaxDescribeBytes // beyond, cut by Describe anyway
		}
		if pe != nil && pe.cause != nil {
			// The description of the cause covers what it wraps.
			b.WriteString(" [cause of " + string(pe.Public().Code) + ": " + describe(pe.cause, depth+1) + "]")
		}
		return false
	})
	return b.String()
}
