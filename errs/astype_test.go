package errs

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// asHook is an error with an As method that claims to be an *Error.
type asHook struct{ target *Error }

func (a asHook) Error() string { return "as hook" }
func (a asHook) As(v any) bool {
	if p, ok := v.(**Error); ok {
		*p = a.target
		return true
	}
	return false
}

func TestAsTypeMatchesErrorsAs(t *testing.T) {
	nf := NotFound("x")
	pe := NewPanicError("p")
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
		NewPanicError(nf),
		nf.WithCause(pe),
	}
	for i, err := range cases {
		var want *Error
		wantOK := errors.As(err, &want)
		got, ok := asType[*Error](err)
		assert.Equal(t, wantOK, ok, "case %d (%v): found", i, err)
		assert.Same(t, want, got, "case %d (%v): the same *Error as errors.As", i, err)

		var wantPE *PanicError
		wantOK = errors.As(err, &wantPE)
		gotPE, ok := asType[*PanicError](err)
		assert.Equal(t, wantOK, ok, "case %d (%v): found a PanicError", i, err)
		assert.Same(t, wantPE, gotPE, "case %d (%v): the same *PanicError as errors.As", i, err)
	}
}

func TestNormalizeDoesNotAllocate(t *testing.T) {
	raw := errors.New("raw")
	pub := fmt.Errorf("w: %w", NotFound("x"))
	allocs := testing.AllocsPerRun(100, func() {
		Normalize(raw)
		Normalize(pub)
	})
	assert.Zero(t, allocs, "Normalize allocates nothing")
}
