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

// blocking is an error whose methods named in blocks wait until release is
// closed (the Error method of one that waits on a lock or the network).
type blocking struct {
	release chan struct{}
	unwrap  bool
	is, as  bool
	inner   error
}

func (b blocking) Error() string { return "dial 10.0.0.7:5432: connection refused" }
func (b blocking) Unwrap() error {
	if b.unwrap {
		<-b.release
	}
	return b.inner
}
func (b blocking) Is(error) bool {
	if b.is {
		<-b.release
	}
	return false
}
func (b blocking) As(any) bool {
	if b.as {
		<-b.release
	}
	return false
}

// goexits calls runtime.Goexit in its Unwrap (t.FailNow in a test double).
type goexits struct{}

func (goexits) Error() string { return "goexits" }
func (goexits) Unwrap() error { runtime.Goexit(); return nil }

// recursing normalizes itself in its Is method.
type recursing struct{}

func (recursing) Error() string { return "recursing" }
func (r recursing) Is(error) bool {
	pub, _ := errs.Normalize(r)
	return pub.Code == errs.CodeCanceled
}

// normalizeWithin returns what Normalize returned, failing the test if it
// has not returned within a generous bound (it gives up after
// MaxNormalizeTime).
func normalizeWithin(t *testing.T, err error) (errs.Public, bool) {
	t.Helper()
	type out struct {
		pub      errs.Public
		scrubbed bool
	}
	done := make(chan out, 1)
	start := time.Now()
	go func() {
		pub, scrubbed := errs.Normalize(err)
		done <- out{pub, scrubbed}
	}()
	select {
	case o := <-done:
		t.Logf("returned after %v", time.Since(start).Round(time.Millisecond))
		return o.pub, o.scrubbed
	case <-time.After(30 * errs.MaxNormalizeTime):
		t.Fatalf("Normalize did not return")
		return errs.Public{}, false
	}
}

// Normalize gives up on an Unwrap, Is or As method that blocks, calls
// runtime.Goexit or recurses: the error is an internal failure, its text
// never the client's, and Describe (what the audit row records) says what
// did not return.
func TestNormalizeGivesUpOnMethodsThatDoNotReturn(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	generic := errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}
	for name, err := range map[string]error{
		"Unwrap blocks":                   blocking{release: release, unwrap: true},
		"Is blocks":                       fmt.Errorf("q: %w", blocking{release: release, is: true}),
		"As blocks":                       errors.Join(context.Canceled, blocking{release: release, as: true}),
		"public error over a stuck cause": errs.NotFound("no such order").WithCause(blocking{release: release, unwrap: true}),
		"Unwrap calls Goexit":             fmt.Errorf("q: %w", goexits{}),
		"Is recurses":                     recursing{},
	} {
		t.Run(name, func(t *testing.T) {
			pub, scrubbed := normalizeWithin(t, err)
			assert.Equal(t, generic, pub, "an internal failure")
			assert.True(t, scrubbed, "the raw message is the server's")
		})
	}
	assert.Contains(t, errs.Describe(blocking{release: release, unwrap: true}), "did not return within",
		"the row says why when the Unwrap blocked")
}

// An error whose methods return is normalized as before, whatever its type:
// a public error inside an unknown wrapper keeps its public fields.
func TestNormalizeUnknownTypesThatReturn(t *testing.T) {
	nf := errs.NotFound("no such order")
	pub, scrubbed := normalizeWithin(t, blocking{inner: nf})
	assert.Equal(t, nf.Public(), pub)
	assert.False(t, scrubbed)
	pub, _ = normalizeWithin(t, blocking{inner: context.Canceled})
	assert.Equal(t, errs.CodeCanceled, pub.Code)
}

// causeWithin returns what NormalizeCause returned under n for a call
// whose context ended, failing the
// test if it has not returned within a generous bound.
func causeWithin(t *testing.T, n errs.Normalizer, err error) (errs.Public, bool, error) {
	t.Helper()
	type out struct {
		pub      errs.Public
		scrubbed bool
		cause    error
	}
	done := make(chan out, 1)
	ended, cancel := context.WithCancel(context.Background())
	cancel() // the call's context ended: rule 4 asks Is
	go func() {
		pub, scrubbed, cause := n.NormalizeCause(ended, err)
		done <- out{pub, scrubbed, cause}
	}()
	select {
	case o := <-done:
		return o.pub, o.scrubbed, o.cause
	case <-time.After(30 * errs.MaxNormalizeTime):
		t.Fatalf("NormalizeCause did not return")
		return errs.Public{}, false, nil
	}
}

// When Normalize gives up, the cause to record says why: a *GaveUpError
// naming the method that did not return (Unwrap, Is, As, the Normalizer's
// Map), its type and why (blocked, Goexit, recursed), followed by the
// error's own description; the client's side is the generic internal
// failure. An error that normalizes is its own cause.
func TestNormalizeCauseSaysWhy(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	generic := errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}
	blockingMap := errs.Normalizer{Map: func(error) *errs.Error { <-release; return nil }}
	for name, c := range map[string]struct {
		n            errs.Normalizer
		err          error
		method, why  string
		typ, message string
	}{
		"Unwrap blocks":       {err: blocking{release: release, unwrap: true}, method: "Unwrap", why: "did not return within 1s", typ: "errs_test.blocking"},
		"Is blocks":           {err: fmt.Errorf("q: %w", blocking{release: release, is: true}), method: "Is", why: "did not return within 1s", typ: "errs_test.blocking", message: "q: dial 10.0.0.7:5432"},
		"As blocks":           {err: errors.Join(context.Canceled, blocking{release: release, as: true}), method: "As", why: "did not return within 1s", typ: "errs_test.blocking", message: "dial 10.0.0.7:5432"},
		"Unwrap calls Goexit": {err: fmt.Errorf("q: %w", goexits{}), method: "Unwrap", why: "called runtime.Goexit", typ: "errs_test.goexits", message: "q: goexits"},
		"Is recurses":         {err: recursing{}, method: "Is", why: "recursed", typ: "errs_test.recursing", message: "recursing"},
		"Map blocks":          {n: blockingMap, err: blocking{}, method: "Map", why: "did not return within 1s", typ: "errs_test.blocking", message: "dial 10.0.0.7:5432"},
	} {
		t.Run(name, func(t *testing.T) {
			pub, scrubbed, cause := causeWithin(t, c.n, c.err)
			assert.Equal(t, generic, pub, "an internal failure")
			assert.True(t, scrubbed)
			var g *errs.GaveUpError
			require.ErrorAs(t, cause, &g, "the cause says why")
			assert.Equal(t, c.method, g.Method())
			assert.Equal(t, c.why, g.Why())
			assert.Equal(t, c.typ, g.Type())
			assert.Equal(t, c.err, g.Err(), "it holds the error")
			d := errs.Describe(cause)
			assert.Contains(t, d, "normalization gave up: ", "the row says normalization gave up")
			assert.Contains(t, d, c.why)
			if c.method == "Map" {
				assert.Contains(t, d, "the Normalizer's Map")
			} else {
				assert.Contains(t, d, "("+c.typ+")."+c.method, "naming the method")
			}
			assert.Contains(t, d, c.message, "and the error's own text, for the server")
			pub, _ = errs.Normalize(cause)
			assert.Equal(t, generic, pub, "the cause itself is a plain internal failure")
		})
	}
	nf := errs.NotFound("no such order")
	_, _, cause := causeWithin(t, errs.Normalizer{}, blocking{inner: nf})
	assert.Equal(t, blocking{inner: nf}, cause, "an error that normalizes is its own cause")
}

// selfDescribing's Error describes itself: without a bound on nesting,
// each Describe would start a goroutine that starts the next, without end.
type selfDescribing struct{}

func (s selfDescribing) Error() string { return "self: " + errs.Describe(s) }

// An Error method that blocks, or that recurses through Describe, gives a
// row description that says so, within the bound, and no goroutine is
// left spinning up more.
func TestDescribeSaysWhyErrorDidNotReturn(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	assert.Contains(t, errs.Describe(blockingError{release}), "errs_test.blockingError: rendering it did not return within 1s")
	before := runtime.NumGoroutine()
	d := errs.Describe(selfDescribing{})
	assert.Contains(t, d, "rendering it recursed through errs.Describe", "the recursion is cut: %s", d)
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "no goroutine left behind starting others")
	pub, _, cause := causeWithin(t, errs.Normalizer{}, selfDescribing{})
	assert.Equal(t, errs.CodeInternal, pub.Code)
	assert.Equal(t, selfDescribing{}, cause, "Normalize never calls Error: nothing to give up on")
}
