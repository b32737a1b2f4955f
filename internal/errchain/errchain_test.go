package errchain_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/errchain"
)

// asHook is an error with an As method that claims to be an *errs.Error.
type asHook struct{ target *errs.Error }

func (a asHook) Error() string { return "as hook" }
func (a asHook) As(v any) bool {
	if p, ok := v.(**errs.Error); ok {
		*p = a.target
		return true
	}
	return false
}

// uncomparable is an error type that == cannot compare.
type uncomparable struct{ parts []string }

func (u uncomparable) Error() string { return "uncomparable" }

func TestAsAndIsMatchTheStandardLibrary(t *testing.T) {
	nf := errs.NotFound("x")
	pe := errs.NewPanicError("p")
	cases := []error{
		nil,
		io.EOF,
		nf,
		fmt.Errorf("a: %w", nf),
		fmt.Errorf("a: %w", fmt.Errorf("b: %w", pe)),
		errors.Join(io.EOF, nf, pe),
		errors.Join(errors.Join(io.EOF), fmt.Errorf("%w and %w", io.EOF, nf)),
		errors.Join(nil, io.EOF),
		asHook{target: nf},
		fmt.Errorf("wrapped hook: %w", asHook{target: nf}),
		errs.NewPanicError(nf),
		nf.WithCause(pe),
		fmt.Errorf("ctx: %w", context.Canceled),
		errors.Join(uncomparable{parts: []string{"a"}}, context.DeadlineExceeded),
	}
	for i, err := range cases {
		var want *errs.Error
		wantOK := errors.As(err, &want)
		got, ok := errchain.As[*errs.Error](err)
		assert.Equal(t, wantOK, ok, "case %d (%v): found", i, err)
		assert.Same(t, want, got, "case %d (%v): the same *Error as errors.As", i, err)

		var wantPE *errs.PanicError
		wantOK = errors.As(err, &wantPE)
		gotPE, ok := errchain.As[*errs.PanicError](err)
		assert.Equal(t, wantOK, ok, "case %d (%v): found a PanicError", i, err)
		assert.Same(t, wantPE, gotPE, "case %d (%v): the same *PanicError as errors.As", i, err)

		for _, target := range []error{io.EOF, context.Canceled, context.DeadlineExceeded, nf, pe, uncomparable{}} {
			assert.Equal(t, errors.Is(err, target), errchain.Is(err, target), "case %d (%v): Is(%v)", i, err, target)
		}
	}
}

// cyclic unwraps to itself (or to next, which may lead back to it).
type cyclic struct{ next error }

func (c *cyclic) Error() string { return "cyclic" }
func (c *cyclic) Unwrap() error {
	if c.next == nil {
		return c
	}
	return c.next
}

// joinCycle is a multi-error that contains itself.
type joinCycle struct{ self *joinCycle }

func (j *joinCycle) Error() string   { return "join cycle" }
func (j *joinCycle) Unwrap() []error { return []error{io.EOF, j.self, j.self} }

// panicky panics in every method the walk calls.
type panicky struct{}

func (panicky) Error() string         { return "panicky" }
func (panicky) Unwrap() error         { panic("Unwrap exploded") }
func (panicky) Is(error) bool         { panic("Is exploded") }
func (panicky) As(any) bool           { panic("As exploded") }
func (*panickyMulti) Error() string   { return "multi" }
func (*panickyMulti) Unwrap() []error { panic("Unwrap []error exploded") }

type panickyMulti struct{}

func TestWalkTerminatesAndNeverPanics(t *testing.T) {
	self := &cyclic{}
	a := &cyclic{}
	b := &cyclic{next: a}
	a.next = fmt.Errorf("back: %w", b)
	j := &joinCycle{}
	j.self = j
	for name, err := range map[string]error{
		"self-cycle":                self,
		"two-node cycle":            a,
		"join that contains itself": j,
		"wrapped cycle":             fmt.Errorf("x: %w", errors.Join(self, a)),
		"panicking methods":         panicky{},
		"panicking multi unwrap":    &panickyMulti{},
		"wrapped panicking":         fmt.Errorf("x: %w", errors.Join(panicky{}, &panickyMulti{})),
	} {
		assert.NotPanics(t, func() {
			_, found := errchain.As[*errs.Error](err)
			assert.False(t, found, "%s: no *errs.Error", name)
			assert.False(t, errchain.Is(err, context.Canceled), "%s: not canceled", name)
		}, "%s: the walk neither hangs nor panics", name)
	}
	assert.True(t, errchain.Is(j, io.EOF), "a cycle's real members are still found")
	nf := errs.NotFound("found")
	got, ok := errchain.As[*errs.Error](errors.Join(self, nf))
	assert.True(t, ok, "a match after a cycle is found")
	assert.Same(t, nf, got, "the match after the cycle")
}

func TestNormalizeDoesNotAllocate(t *testing.T) {
	raw := errors.New("raw")
	pub := fmt.Errorf("w: %w", errs.NotFound("x"))
	allocs := testing.AllocsPerRun(100, func() {
		errs.Normalize(raw)
		errs.Normalize(pub)
	})
	assert.Zero(t, allocs, "Normalize allocates nothing")
}

func TestIsErrorString(t *testing.T) {
	assert.True(t, errchain.IsErrorString(errors.New("x")), "errors.New")
	assert.True(t, errchain.IsErrorString(fmt.Errorf("x %d", 1)), "fmt.Errorf without %%w")
	assert.False(t, errchain.IsErrorString(fmt.Errorf("x: %w", errors.New("y"))), "a wrapper")
	assert.False(t, errchain.IsErrorString(context.DeadlineExceeded), "another type")
	assert.False(t, errchain.IsErrorString(nil), "nil")
}
