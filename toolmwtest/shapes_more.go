package toolmwtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolmwtest/shapes"
)

// More error types of the shapes below.
type (
	// greedyError claims to be every error: Is matches any target and As
	// fills none.
	greedyError struct{ secret string }
	// goexitStringer calls runtime.Goexit in String.
	goexitStringer struct{ secret string }
	// marshalPanicError is an error with the canary in its text whose
	// MarshalJSON panics with the canary.
	marshalPanicError struct{ secret string }
	// textMarshalError encodes to JSON as its own text, canary included.
	textMarshalError struct{ secret string }
)

func (e greedyError) Error() string {
	return "greedy: " + e.secret
}
func (greedyError) Is(error) bool { return true }
func (greedyError) As(any) bool   { return true }
func (s goexitStringer) String() string {
	runtime.Goexit()
	return s.secret
}
func (e marshalPanicError) Error() string { return "marshal panics: " + e.secret }
func (e marshalPanicError) MarshalJSON() ([]byte, error) {
	panic("MarshalJSON of " + e.secret)
}
func (e textMarshalError) Error() string { return "driver: " + e.secret }
func (e textMarshalError) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%q", e.Error())), nil
}

// deepChain is err wrapped n times with %w.
func deepChain(err error, n int) error {
	for i := range n {
		err = fmt.Errorf("layer %d: %w", i, err)
	}
	return err
}

// canceledWithCause returns the error and cause of a context cancelled with
// a raw cause, joined, as a handler that reports both would.
func canceledWithCause(c string) error {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("upstream closed: " + c))
	return fmt.Errorf("%w: %w", ctx.Err(), context.Cause(ctx))
}

// timedOutWithCause is a context.WithTimeoutCause's error and cause.
func timedOutWithCause(c string) error {
	ctx, cancel := context.WithTimeoutCause(context.Background(), time.Nanosecond, errors.New("query budget spent: "+c))
	defer cancel()
	<-ctx.Done()
	return errors.Join(ctx.Err(), context.Cause(ctx))
}

// moreShapes are fixed shapes found in the hunt of the session that added
// them: cycles, trees with holes, texts that change, methods that Goexit,
// raw error values in a public error's detail, context causes.
var moreShapes = []func(c string) Failure{
	func(c string) Failure {
		return Failure{"an error whose Error returns another text each call", c, Raw, returning(&shapes.ShiftingError{Secret: c})}
	},
	func(c string) Failure {
		return Failure{"an error that wraps itself (Unwrap returns it)", c, Raw, returning(&shapes.Cyclic{Secret: c})}
	},
	func(c string) Failure {
		a := &shapes.HoleyCycleA{Secret: c}
		a.B = &shapes.HoleyCycleB{A: a}
		return Failure{"two errors that wrap each other through Unwrap() []error, with nil entries", c, Raw, returning(a)}
	},
	func(c string) Failure {
		return Failure{"Unwrap() []error with nil entries", c, Raw, returning(multiError{nil, errors.New(c), nil})}
	},
	func(c string) Failure {
		return Failure{"a %w chain 10,000 deep", c, Raw, returning(deepChain(fmt.Errorf("bottom: %s", c), 10_000))}
	},
	func(c string) Failure {
		return Failure{"an error whose Is matches every target and As fills none", c, Raw, returning(greedyError{c})}
	},
	func(c string) Failure {
		return Failure{"an error whose text is invalid UTF-8 around the canary", c, Raw, returning(errors.New("\xff\xfe" + c + "\xc3"))}
	},
	func(c string) Failure {
		return Failure{"context.WithCancelCause's error and its raw cause", c, Raw, returning(canceledWithCause(c))}
	},
	func(c string) Failure {
		return Failure{"context.WithTimeoutCause's error and its raw cause, joined", c, Raw, func() error { return timedOutWithCause(c) }}
	},
	func(c string) Failure {
		return Failure{"errors.Join of a public error and a raw one", c, PublicWrapping, returning(errors.Join(errs.Unavailable("try later"), errors.New(c)))}
	},
	func(c string) Failure {
		return Failure{"a public error whose detail holds a raw *fs.PathError", c, PublicWrapping,
			returning(errs.NotFound("no such report").WithDetail(map[string]any{"error": &fs.PathError{Op: "open", Path: "/srv/" + c, Err: fs.ErrNotExist}}))}
	},
	func(c string) Failure {
		return Failure{"a public error whose detail holds a raw *url.Error in a list", c, PublicWrapping,
			returning(errs.Unavailable("the backend is unavailable").WithDetail(map[string]any{"tried": []any{&url.Error{Op: "Get", URL: "https://" + c, Err: errors.New("refused")}}}))}
	},
	func(c string) Failure {
		return Failure{"a public error whose detail holds an error that encodes as its text", c, PublicWrapping,
			returning(errs.InvalidArguments("bad input").WithDetail(map[string]any{"why": map[string]any{"err": textMarshalError{c}}}))}
	},
	func(c string) Failure {
		return Failure{"a public error whose message errs.Errorf formats from the raw error", c, PublicWrapping,
			returning(errs.Errorf(errs.CodeUnavailable, "load report: %v (%w)", errors.New(c), errors.New(c)))}
	},
	func(c string) Failure {
		return Failure{"an error whose Error calls runtime.Goexit", c, Opaque, returning(shapes.GoexitError{Secret: c})}
	},
	func(c string) Failure {
		return Failure{"panic whose value's Error calls runtime.Goexit", c, Opaque, panicking(shapes.GoexitError{Secret: c})}
	},
	func(c string) Failure {
		return Failure{"panic whose value's String calls runtime.Goexit", c, Opaque, panicking(goexitStringer{c})}
	},
	func(c string) Failure {
		return Failure{"panic whose value's MarshalJSON panics", c, Panic, panicking(marshalPanicError{c})}
	},
	func(c string) Failure {
		return Failure{"panic with a public error whose cause has the canary", c, Panic, panicking(errs.NotFound("gone").WithCause(errors.New(c)))}
	},
	func(c string) Failure {
		return Failure{"raw text that looks like the generic message then the canary", c, Raw,
			returning(errors.New(errs.GenericMessage + strings.Repeat(" ", 3) + c))}
	},
}

// fixedShapes are the shapes every Generate starts with.
var fixedShapes = append(append([]func(c string) Failure(nil), baseShapes...), moreShapes...)
