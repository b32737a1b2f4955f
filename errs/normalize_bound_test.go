package errs_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
