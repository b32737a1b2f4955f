package shapes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Prefix starts every canary, so that a part of one is found too.
const Prefix = "CANARY-"

// NewCanary returns a fresh secret that looks like a connection string.
func NewCanary(r *rand.Rand) string {
	return fmt.Sprintf("%s%08x-postgres://admin:hunter2@db.internal:5432", Prefix, r.Uint32())
}

// Case is one shape of failure.
type Case struct {
	Name string
	// Handler fails in some way that involves the canary.
	Handler toolctx.Handler
	// Public: an explicit public error is reachable in the chain: the
	// result is not scrubbed and Diagnostics is not called.
	Public bool
	// CtxErr: a context error is reachable and nothing public: it is
	// public (canceled or timeout) only when the call's context ended,
	// and a raw failure while the call is live.
	CtxErr bool
	// Panics: the handler panics (Diagnostics gets a stack).
	Panics bool
	// Opaque: nothing the server side can render carries the canary (a
	// typed nil, a panic(nil)): check the cause by identity or as a
	// PanicError instead.
	Opaque bool
	// Err is the error returned or panicked with, when there is one.
	Err error
}

// Returning is a handler that returns ErrorResult(err).
func Returning(err error) toolctx.Handler {
	return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.ErrorResult(err) })
}

// Panicking is a handler that panics with v.
func Panicking(v any) toolctx.Handler {
	return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { panic(v) })
}

// CustomError is an error type whose text is the secret.
type CustomError struct{ Secret string }

func (e *CustomError) Error() string { return "custom: " + e.Secret }

// PanicStruct is a panic value with the secret in a field.
type PanicStruct struct{ Secret string }

// ErrorPanics is an error whose Error method panics with the secret.
type ErrorPanics struct{ Secret string }

func (e ErrorPanics) Error() string { panic("Error exploded: " + e.Secret) }

// WrapErrorPanics wraps Inner; its Error panics with the secret.
type WrapErrorPanics struct {
	Secret string
	Inner  error
}

func (e *WrapErrorPanics) Error() string { panic("wrapper's Error exploded: " + e.Secret) }
func (e *WrapErrorPanics) Unwrap() error { return e.Inner }

// UnwrapPanics hides Inner behind an Unwrap that panics.
type UnwrapPanics struct {
	Secret string
	Inner  error
}

func (e *UnwrapPanics) Error() string { return "unwrap panics: " + e.Secret }
func (e *UnwrapPanics) Unwrap() error { panic("Unwrap exploded: " + e.Secret) }

// IsAsPanics wraps Inner; its Is and As methods panic.
type IsAsPanics struct{ Inner error }

func (e *IsAsPanics) Error() string              { return "is/as panic: " + errs.Describe(e.Inner) }
func (e *IsAsPanics) Unwrap() error              { return e.Inner }
func (e *IsAsPanics) Is(error) bool              { panic("Is exploded") }
func (e *IsAsPanics) As(any) bool                { panic("As exploded") }
func (e *IsAsPanics) Format(f fmt.State, _ rune) { fmt.Fprint(f, e.Error()) }

// Cyclic unwraps to itself, for ever; Inner is never reached.
type Cyclic struct {
	Secret string
	Inner  error
}

func (e *Cyclic) Error() string { return "cyclic: " + e.Secret }
func (e *Cyclic) Unwrap() error { return e }

// CycleA and CycleB unwrap to each other.
type CycleA struct {
	Secret string
	B      *CycleB
}

// CycleB is CycleA's other half.
type CycleB struct{ A *CycleA }

func (e *CycleA) Error() string { return "cycle a: " + e.Secret }
func (e *CycleA) Unwrap() error { return e.B }
func (e *CycleB) Error() string { return "cycle b" }
func (e *CycleB) Unwrap() error { return e.A }

// HoleyCycleA and HoleyCycleB unwrap to each other through Unwrap() []error,
// with nil holes in the trees.
type HoleyCycleA struct {
	Secret string
	B      *HoleyCycleB
}

// HoleyCycleB is HoleyCycleA's other half.
type HoleyCycleB struct{ A *HoleyCycleA }

func (a *HoleyCycleA) Error() string   { return "cycle a: " + a.Secret }
func (a *HoleyCycleA) Unwrap() []error { return []error{nil, a.B, nil} }
func (b *HoleyCycleB) Error() string   { return "cycle b" }
func (b *HoleyCycleB) Unwrap() []error { return []error{b.A, nil} }

// GoexitError calls runtime.Goexit in Error, as t.FailNow in a test double
// would.
type GoexitError struct{ Secret string }

func (e GoexitError) Error() string { runtime.Goexit(); return e.Secret }

// ShiftingError's Error returns another text each call, the secret in each.
type ShiftingError struct {
	Secret string
	n      atomic.Int64
}

func (e *ShiftingError) Error() string { return fmt.Sprintf("attempt %d: %s", e.n.Add(1), e.Secret) }

// FormatterError is an error that is also a fmt.Formatter printing the
// secret.
type FormatterError struct{ Secret string }

func (e FormatterError) Error() string              { return "formatter error: " + e.Secret }
func (e FormatterError) Format(f fmt.State, _ rune) { fmt.Fprint(f, "formatted: "+e.Secret) }

// Formatter is a non-error panic value that prints the secret.
type Formatter struct{ Secret string }

func (v Formatter) Format(f fmt.State, _ rune) { fmt.Fprint(f, "formatted value: "+v.Secret) }

// StringPanics is a panic value whose String panics with the secret.
type StringPanics struct{ Secret string }

func (v StringPanics) String() string { panic("String exploded: " + v.Secret) }

// FormatPanics is a panic value whose Format panics with the secret.
type FormatPanics struct{ Secret string }

func (v FormatPanics) Format(fmt.State, rune) { panic("Format exploded: " + v.Secret) }

// Fixed returns one case of each shape.
func Fixed(canary string) []Case {
	raw := errors.New(canary)
	ret := func(name string, err error) Case { return Case{Name: name, Handler: Returning(err), Err: err} }
	pub := func(c Case) Case { c.Public = true; return c }
	ctxErr := func(c Case) Case { c.CtxErr = true; return c }
	opaque := func(c Case) Case { c.Opaque = true; return c }
	panics := func(name string, v any) Case {
		err, _ := v.(error)
		return Case{Name: name, Handler: Panicking(v), Panics: true, Err: err}
	}
	sloppy := toolctx.ErrorResult(raw)
	// A handler that also put the raw text in public fields of its
	// result: normalization drops them.
	sloppy.Content = []toolctx.Content{&toolctx.Text{Text: canary}}
	sloppy.StructuredContent = map[string]string{"error": canary}
	sloppy.Meta = map[string]any{"error": canary}
	var typedNil *CustomError
	var nilPublic *errs.Error
	var nilPanic *errs.PanicError
	cycle := &CycleA{Secret: canary}
	cycle.B = &CycleB{A: cycle}
	handSetCause := errs.NotFound("gone").WithCause(raw)
	return []Case{
		ret("plain", raw),
		ret("wrapped %w", fmt.Errorf("load invoice: %w", raw)),
		ret("wrapped twice with canary in the wrapper", fmt.Errorf("%s: %w", canary, fmt.Errorf("inner: %w", errors.New("x")))),
		ret("joined", errors.Join(errors.New("first"), raw)),
		ret("custom type", &CustomError{canary}),
		pub(ret("errs.Error with a private cause", errs.NotFound("no such invoice").WithCause(raw))),
		pub(ret("errs.Error wrapped by a raw error naming the canary", fmt.Errorf("%s: %w", canary, errs.PermissionDenied("no").WithCause(raw)))),
		pub(ret("errs.Error joined with the canary", errors.Join(raw, errs.Unavailable("later")))),
		ctxErr(ret("context canceled wrapped with the canary", fmt.Errorf("%s: %w", canary, context.Canceled))),
		ctxErr(ret("deadline joined with the canary", errors.Join(raw, context.DeadlineExceeded))),
		{Name: "raw text in the result's public fields", Handler: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return sloppy }), Err: raw},
		{Name: "typed handler error", Handler: toolctx.Typed(func(context.Context, *toolctx.Request, struct{}) (struct{}, error) {
			return struct{}{}, fmt.Errorf("typed: %w", raw)
		})},
		ret("Error panics", ErrorPanics{canary}),
		ret("Error panics, wrapped", fmt.Errorf("w: %w", ErrorPanics{canary})),
		ret("Error panics, joined", errors.Join(ErrorPanics{canary}, errors.New("other"))),
		pub(ret("Error panics, around a public error", &WrapErrorPanics{Secret: canary, Inner: errs.NotFound("gone")})),
		ret("Unwrap panics, hiding a public error", &UnwrapPanics{Secret: canary, Inner: errs.NotFound("gone")}),
		pub(ret("Is and As panic, around a public error", &IsAsPanics{Inner: errs.NotFound("gone").WithCause(raw)})),
		ret("Is and As panic, around a raw error", &IsAsPanics{Inner: raw}),
		ret("cyclic Unwrap", &Cyclic{Secret: canary, Inner: errs.NotFound("unreachable")}),
		ret("two-error cycle", cycle),
		pub(ret("a cycle joined with a public error", errors.Join(&Cyclic{Secret: canary}, errs.Unavailable("later")))),
		// The canary first: a description is cut to errs.MaxDescribeBytes.
		ret("huge message", errors.New(canary+strings.Repeat("x", 1<<20))),
		opaque(ret("nil pointer receiver", typedNil)),
		opaque(ret("typed nil *errs.Error", nilPublic)),
		opaque(panics("panic with a typed nil *errs.PanicError", nilPanic)),
		ret("fmt.Formatter error", FormatterError{canary}),
		pub(Case{Name: "an envelope set by hand with the canary in structured content and every _meta", Err: handSetCause, Handler: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			r := toolctx.ErrorResult(handSetCause)
			r.Error = &errs.Public{Code: errs.CodeNotFound, Message: "gone"}
			r.Content = []toolctx.Content{&toolctx.Text{Text: "gone", Meta: map[string]any{"cause": canary}}}
			r.StructuredContent, r.Meta = map[string]any{"cause": canary}, map[string]any{"cause": canary}
			return r
		})}),
		opaque(ret("Error calls runtime.Goexit", GoexitError{canary})),
		opaque(ret("Error calls runtime.Goexit, joined", errors.Join(errors.New("first"), GoexitError{canary}))),
		opaque(panics("panic with an error whose Error calls runtime.Goexit", GoexitError{canary})),
		ret("Error returns another text each call", &ShiftingError{Secret: canary}),
		pub(ret("errs.Error whose detail holds a raw error value", errs.NotFound("gone").WithCause(raw).
			WithDetail(map[string]any{"error": &fs.PathError{Op: "open", Path: canary, Err: fs.ErrNotExist}, "list": []any{raw}}))),
		pub(ret("errors.Join of public and raw", errors.Join(errs.InvalidArguments("bad"), raw, ErrorPanics{canary}))),
		panics("panic string", canary),
		panics("panic error", fmt.Errorf("wrapped: %w", raw)),
		panics("panic struct", PanicStruct{Secret: canary}),
		panics("panic errs.Error", errs.NotFound(canary)),
		panics("panic errs.Error with a private cause", errs.NotFound("public").WithCause(raw)),
		panics("panic with an error whose Error panics", ErrorPanics{canary}),
		panics("panic with a Stringer whose String panics", StringPanics{canary}),
		panics("panic with a Formatter whose Format panics", FormatPanics{canary}),
		panics("panic with a Formatter", Formatter{canary}),
		panics("panic with a cycle", cycle),
		opaque(panics("panic with a nil pointer receiver", typedNil)),
		opaque(panics("panic nil", nil)),
		opaque(Case{Name: "panic nil dereference", Panics: true, Handler: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			var p *struct{ X int }
			return toolctx.TextResult(fmt.Sprint(p.X))
		})}),
	}
}

// Random builds a random shape around canary: a leaf, a chain of
// wrappings, joins, custom and hostile types and explicit public errors,
// returned or panicked in one of several ways.
func Random(r *rand.Rand, canary string) Case {
	var (
		err                     error
		public, ctxErr, carries bool
		desc                    []string
	)
	carries = true
	switch r.Intn(10) {
	case 0:
		err, desc = errors.New(canary), append(desc, "plain")
	case 1:
		err, desc = &CustomError{canary}, append(desc, "custom")
	case 2:
		err, desc = fmt.Errorf("%s: %w", canary, errors.New("leaf")), append(desc, "canary-in-wrapper")
	case 3:
		err, desc = ErrorPanics{canary}, append(desc, "error-panics")
	case 4:
		err, desc = errors.New(canary+strings.Repeat("y", 64<<10)), append(desc, "huge") // the canary first: descriptions are cut
	case 5:
		err, desc = FormatterError{canary}, append(desc, "formatter-error")
	case 6:
		var e *CustomError
		err, carries, desc = e, false, append(desc, "typed-nil")
	case 7:
		var e *errs.Error
		err, carries, desc = e, false, append(desc, "typed-nil-errs.Error")
	case 8:
		err, ctxErr, desc = fmt.Errorf("%s: %w", canary, context.Canceled), true, append(desc, "canceled")
	default:
		err, ctxErr, desc = errors.Join(errors.New(canary), context.DeadlineExceeded), true, append(desc, "deadline")
	}
	codes := errs.Codes()
	for depth := r.Intn(5); depth > 0; depth-- {
		switch r.Intn(10) {
		case 0:
			err, desc = fmt.Errorf("layer %d: %w", depth, err), append(desc, "wrap")
		case 1:
			err, desc = errors.Join(errors.New("other"), err), append(desc, "join")
		case 2:
			err, carries, desc = errors.Join(err, fmt.Errorf("again %s", canary)), true, append(desc, "join-canary")
		case 3:
			code := codes[r.Intn(len(codes))]
			err = errs.New(code, "public message "+string(code)).WithCause(err)
			public, desc = true, append(desc, "errs.Error:"+string(code))
		case 4:
			err, carries, desc = fmt.Errorf("%s wrapped: %w", canary, err), true, append(desc, "wrap-canary")
		case 5:
			// Hides everything below it.
			err, public, ctxErr, carries = &UnwrapPanics{Secret: canary, Inner: err}, false, false, true
			desc = append(desc, "unwrap-panics")
		case 6:
			err, public, ctxErr, carries = &Cyclic{Secret: canary, Inner: err}, false, false, true
			desc = append(desc, "cyclic")
		case 7:
			err, desc = &IsAsPanics{Inner: err}, append(desc, "is-as-panics")
		case 8:
			err, public, desc = errors.Join(err, errs.Unavailable("later")), true, append(desc, "join-public")
		default:
			err, carries, desc = &WrapErrorPanics{Secret: canary, Inner: err}, true, append(desc, "wrap-error-panics")
		}
	}
	name := strings.Join(desc, ">")
	panicking := func(how string, v any, ofErr bool) Case {
		e, _ := v.(error)
		return Case{Name: name + ">" + how, Handler: Panicking(v), Panics: true, Err: e, Opaque: !carries && ofErr}
	}
	switch r.Intn(10) {
	case 0:
		return panicking("panic-error", err, true)
	case 1:
		return panicking("panic-string", errs.Describe(err), true)
	case 2:
		return panicking("panic-struct", PanicStruct{Secret: errs.Describe(err)}, true)
	case 3:
		return panicking("panic-formatter", Formatter{canary}, false)
	case 4:
		return panicking("panic-string-panics", StringPanics{canary}, false)
	case 5:
		return panicking("panic-format-panics", FormatPanics{canary}, false)
	}
	return Case{Name: name + ">return", Handler: Returning(err), Public: public, CtxErr: ctxErr && !public, Opaque: !carries, Err: err}
}

// Reaches reports whether the server side can render the canary from v:
// its description ([errs.Describe]) or that of anything it wraps (a panic
// value, a cause, a member of a join), walked without panicking and for a
// bounded depth.
func Reaches(v any, canary string) bool { return reaches(v, canary, 0) }

func reaches(v any, canary string, depth int) bool {
	if v == nil || depth > 20 {
		return false
	}
	if strings.Contains(errs.Describe(v), canary) {
		return true
	}
	if pe, ok := v.(*errs.PanicError); ok && pe != nil {
		return reaches(pe.Value, canary, depth+1)
	}
	err, ok := v.(error)
	if !ok {
		return false
	}
	for _, inner := range unwrap(err) {
		if reaches(inner, canary, depth+1) {
			return true
		}
	}
	return false
}

func unwrap(err error) (out []error) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	switch x := err.(type) {
	case interface{ Unwrap() error }:
		return []error{x.Unwrap()}
	case interface{ Unwrap() []error }:
		return x.Unwrap()
	}
	return nil
}
