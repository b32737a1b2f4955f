package errchain_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/errchain"
)

// stuck is an error whose Unwrap, Is and As wait until release is closed.
type stuck struct{ release chan struct{} }

func (s stuck) Error() string { return "stuck" }
func (s stuck) Unwrap() error { <-s.release; return nil }

type stuckIs struct{ release chan struct{} }

func (s stuckIs) Error() string { return "stuck is" }
func (s stuckIs) Is(error) bool { <-s.release; return false }
func (s stuckIs) As(any) bool   { <-s.release; return false }

// exits is an error whose Unwrap calls runtime.Goexit.
type exits struct{}

func (exits) Error() string { return "exits" }
func (exits) Unwrap() error { runtime.Goexit(); return nil }

// returnsWithin runs f and fails the test unless f returns within a
// generous bound: a walk that gives up after MaxTime.
func returnsWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * errchain.MaxTime):
		t.Fatalf("%s did not return", what)
	}
}

func TestKnown(t *testing.T) {
	pathErr := &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}
	for _, err := range []error{
		nil,
		errors.New("x"),
		fmt.Errorf("a: %w", errors.New("x")),
		errors.Join(context.Canceled, context.DeadlineExceeded),
		errs.NotFound("x").WithCause(fmt.Errorf("q: %w", pathErr)),
		errs.NewPanicError("v"),
		os.ErrNotExist,
	} {
		assert.True(t, errchain.Known(err), "%v (%T) is made of known types", err, err)
	}
	release := make(chan struct{})
	defer close(release)
	for _, err := range []error{
		stuck{release},
		fmt.Errorf("a: %w", stuck{release}),
		errs.NotFound("x").WithCause(errors.Join(errors.New("io"), stuckIs{release})),
		asHook{},
	} {
		assert.False(t, errchain.Known(err), "%T holds a type toolmw does not know", err)
	}
}

// An Unwrap, Is or As method that blocks, or calls runtime.Goexit, is given
// up on after MaxTime: no match, and the walk returns.
func TestAsAndIsGiveUpOnMethodsThatDoNotReturn(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for name, err := range map[string]error{
		"Unwrap blocks":         fmt.Errorf("w: %w", stuck{release}),
		"Is and As block":       errors.Join(errors.New("a"), stuckIs{release}),
		"Unwrap calls Goexit":   fmt.Errorf("w: %w", exits{}),
		"inside a public error": errs.NotFound("x").WithCause(stuck{release}),
	} {
		t.Run(name, func(t *testing.T) {
			returnsWithin(t, "As", func() {
				_, ok := errchain.As[*errs.PanicError](err)
				assert.False(t, ok)
			})
			returnsWithin(t, "Is", func() {
				assert.False(t, errchain.Is(err, context.Canceled))
			})
		})
	}
}

// A known chain is walked on the caller's goroutine: no goroutine, no
// allocation.
func TestKnownChainsAreWalkedInline(t *testing.T) {
	err := errs.NotFound("x").WithCause(fmt.Errorf("q: %w", context.Canceled))
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = errchain.As[*errs.PanicError](err)
		_ = errchain.Is(err, context.Canceled)
	})
	assert.Zero(t, allocs)
	require.True(t, errchain.Is(err, context.Canceled))
}

// A method that recurses through Within (here, directly) is given up on:
// the recursion ends, neither its stack nor its goroutines grow without
// bound.
func TestWithinBoundsRecursion(t *testing.T) {
	var depth func(n int) int
	depth = func(n int) int {
		d, ok := errchain.Within(func() int { return depth(n + 1) })
		if !ok {
			return n
		}
		return d
	}
	returnsWithin(t, "the recursion", func() {
		assert.Less(t, depth(0), 20, "it stops a few levels down")
	})
}
