package errs_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
)

// bomb is an error whose Error panics with an error whose Error panics:
// rendering a panic value must not be where the fault escapes.
type bomb struct{ depth int }

func (b bomb) Error() string {
	if b.depth > 0 {
		panic(bomb{depth: b.depth - 1})
	}
	panic("the innermost bomb: " + canaryText)
}

const canaryText = "CANARY dsn=postgres://u:p@10.0.0.7/db"

// hostile is an error whose methods misbehave as its fields say.
type hostile struct {
	unwrapPanics, isPanics, asGoexits, isGoexits, unwrapSelf bool
	errorBlocks                                              chan struct{}
	fanout                                                   int
}

func (h hostile) Error() string {
	if h.errorBlocks != nil {
		<-h.errorBlocks
	}
	return "hostile " + canaryText
}

func (h hostile) Unwrap() []error {
	switch {
	case h.unwrapPanics:
		panic(bomb{depth: 3})
	case h.unwrapSelf:
		return []error{h, h}
	case h.fanout > 0:
		out := make([]error, h.fanout)
		for i := range out {
			out[i] = errors.New(canaryText)
		}
		return out
	}
	return nil
}

func (h hostile) Is(error) bool {
	if h.isPanics {
		panic(bomb{depth: 2})
	}
	if h.isGoexits {
		runtime.Goexit()
	}
	return false
}

func (h hostile) As(any) bool {
	if h.asGoexits {
		runtime.Goexit()
	}
	return false
}

// wrapper wraps an error with a short text of its own.
type wrapper struct{ inner error }

func (w wrapper) Error() string { return "w" }
func (w wrapper) Unwrap() error { return w.inner }

// deep is a chain of n wrappers around inner.
func deep(n int, inner error) error {
	for range n {
		inner = wrapper{inner}
	}
	return inner
}

// Shapes of error no earlier test tried: methods that panic with a value
// that panics when rendered, an Is or As that calls Goexit, a chain that
// is its own cause, a fan-out of 100,000 causes, a chain 100,000 deep, an
// Error that blocks, a Map that panics with a bomb. Every one is answered
// as an internal failure (or its public error), within the bound, without
// the raw text; the cause for the row renders within the bound too.
func TestNormalizeHostileShapes(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	generic := errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}
	nf := errs.NotFound("no such order")
	for name, c := range map[string]struct {
		err  error
		n    errs.Normalizer
		want errs.Public
	}{
		"Error panics with a panicking error":     {err: bomb{depth: 3}, want: generic},
		"Unwrap panics with a panicking error":    {err: hostile{unwrapPanics: true}, want: generic},
		"Is panics with a panicking error":        {err: fmt.Errorf("q: %w", hostile{isPanics: true}), want: generic},
		"Is calls Goexit":                         {err: hostile{isGoexits: true}, want: generic},
		"As calls Goexit":                         {err: errors.Join(errors.New("x"), hostile{asGoexits: true}), want: generic},
		"Unwrap returns itself":                   {err: hostile{unwrapSelf: true}, want: generic},
		"100,000 causes":                          {err: hostile{fanout: 100_000}, want: generic},
		"100,000 deep":                            {err: deep(100_000, errors.New(canaryText)), want: generic},
		"a public error 100,000 deep":             {err: deep(100_000, nf), want: generic}, // past the walk's bound: not found
		"a public error 90 deep":                  {err: deep(90, nf), want: nf.Public()},
		"Error blocks":                            {err: hostile{errorBlocks: release}, want: generic},
		"Map panics with a bomb":                  {err: errors.New(canaryText), n: errs.Normalizer{Map: func(error) *errs.Error { panic(bomb{depth: 2}) }}, want: generic},
		"Map returns a public error over a bomb":  {err: errors.New("x"), n: errs.Normalizer{Map: func(error) *errs.Error { return errs.NotFound("gone").WithCause(bomb{}) }}, want: errs.NotFound("gone").Public()},
		"public error whose cause Unwrap panics":  {err: nf.WithCause(hostile{unwrapPanics: true}), want: nf.Public()},
		"a bomb wrapped around a public error":    {err: errors.Join(bomb{depth: 1}, nf), want: nf.Public()},
		"Is calls Goexit under a public error":    {err: errors.Join(hostile{isGoexits: true}, nf), want: generic},
		"Error blocks under an ended call's rule": {err: errors.Join(context.Canceled, hostile{errorBlocks: release}), want: errs.Public{Code: errs.CodeCanceled, Message: "the tool call was canceled"}},
	} {
		t.Run(name, func(t *testing.T) {
			pub, _, cause := causeWithin(t, c.n, c.err)
			if name == "Is calls Goexit under a public error" && pub.Code == errs.CodeNotFound {
				c.want = nf.Public() // the public error is found before the Goexit: either is sound
			}
			assert.Equal(t, c.want, pub)
			assert.NotContains(t, pub.Message, "CANARY", "never the raw text")
			assert.NotContains(t, fmt.Sprint(pub.Detail), "CANARY", "never the raw text")
			text := make(chan string, 1)
			go func() {
				if cause == nil {
					text <- ""
					return
				}
				text <- errs.Describe(cause)
			}()
			select {
			case s := <-text:
				assert.Less(t, len(s), 1<<20, "the row's description is bounded")
			case <-time.After(30 * errs.MaxNormalizeTime):
				t.Fatal("describing the cause did not return")
			}
		})
	}
}

// Normalize on many goroutines at once over errors whose methods block:
// each gives up within its own bound, none waits for another's.
func TestNormalizeBoundedInParallel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	const n = 64
	done := make(chan errs.Public, n)
	for range n {
		go func() {
			pub, _ := errs.Normalize(blocking{release: release, unwrap: true})
			done <- pub
		}()
	}
	deadline := time.After(30 * errs.MaxNormalizeTime)
	for range n {
		select {
		case pub := <-done:
			require.Equal(t, errs.CodeInternal, pub.Code)
		case <-deadline:
			t.Fatal("not every Normalize returned")
		}
	}
}
