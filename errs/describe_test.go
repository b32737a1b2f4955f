package errs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
)

// errPanics is an error whose Error method panics.
type errPanics struct{ v any }

func (e errPanics) Error() string { panic(e.v) }

// stringPanics is a Stringer whose String panics.
type stringPanics struct{}

func (stringPanics) String() string { panic("String exploded") }

// formatPanics is a fmt.Formatter whose Format panics.
type formatPanics struct{}

func (formatPanics) Format(fmt.State, rune) { panic("Format exploded") }

// nilReceiver dereferences its receiver.
type nilReceiver struct{ msg string }

func (n *nilReceiver) Error() string { return n.msg }

// formatter is a well-behaved fmt.Formatter.
type formatter struct{ s string }

func (f formatter) Format(s fmt.State, _ rune) { fmt.Fprint(s, "formatted "+f.s) }

func TestDescribeNeverPanics(t *testing.T) {
	var typedNil *nilReceiver
	var nilErr *errs.Error
	var nilPanic *errs.PanicError
	cases := map[string]struct {
		v    any
		want string // a substring
	}{
		"nil":                   {nil, "<nil>"},
		"string":                {"plain CANARY", "plain CANARY"},
		"error":                 {errors.New("raw CANARY"), "raw CANARY"},
		"Error panics":          {errPanics{"boom"}, "errs_test.errPanics"},
		"Error panics nested":   {errPanics{errPanics{errPanics{"deep"}}}, "errs_test.errPanics"},
		"String panics":         {stringPanics{}, "errs_test.stringPanics"},
		"Format panics":         {formatPanics{}, "errs_test.formatPanics"},
		"nil receiver":          {typedNil, "*errs_test.nilReceiver: nil pointer"},
		"nil *errs.Error":       {nilErr, "nil *errs.Error"},
		"nil *errs.PanicError":  {nilPanic, "nil *errs.PanicError"},
		"formatter":             {formatter{"CANARY"}, "formatted CANARY"},
		"errs.Error with cause": {errs.NotFound("no such row").WithCause(errors.New("CANARY")), "not_found: no such row: CANARY"},
		"panic error":           {errs.NewPanicError(errPanics{"x"}), "panic: !(errs_test.errPanics"},
		"struct":                {struct{ A string }{"v"}, "{v}"},
		"huge":                  {strings.Repeat("x", 1<<20) + "CANARY", "…[truncated 1048582 bytes]"}, // cut to MaxDescribeBytes
	}
	for name, c := range cases {
		var got string
		require.NotPanics(t, func() { got = errs.Describe(c.v) }, "%s: Describe never panics", name)
		assert.Contains(t, got, c.want, "%s: the description", name)
	}
	assert.NotPanics(t, func() { _ = errs.NewPanicError(errPanics{"boom"}).Error() }, "PanicError.Error survives a value whose Error panics")
	assert.NotPanics(t, func() { _ = errs.NewPanicError(stringPanics{}).Error() }, "PanicError.Error survives a value whose String panics")
}

func TestErrorRenderings(t *testing.T) {
	e := errs.PermissionDenied("no access").WithCause(fmt.Errorf("ldap: %w", errors.New("CANARY bind failed")))
	assert.Equal(t, "no access", e.Error(), "Error is the public message")
	for _, verb := range []string{"%v", "%s"} {
		assert.Equal(t, "no access", fmt.Sprintf(verb, e), "%s is the public message", verb)
	}
	assert.Equal(t, `"no access"`, fmt.Sprintf("%q", e), "%q quotes the public message")
	assert.NotContains(t, fmt.Sprintf("%#v", e), "CANARY", "%#v has no cause")
	assert.Equal(t, "permission_denied: no access: ldap: CANARY bind failed", fmt.Sprintf("%+v", e), "%+v has the code and the cause")
	assert.NotContains(t, fmt.Errorf("wrap: %w", e).Error(), "CANARY", "wrapping keeps the cause out of the text")
	nested := errs.Unavailable("later").WithCause(e)
	assert.Equal(t, "unavailable: later: permission_denied: no access: ldap: CANARY bind failed", fmt.Sprintf("%+v", nested), "%+v follows a nested *Error's cause")

	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "err", e)
	assert.Contains(t, buf.String(), "err.code=permission_denied", "slog: the code")
	assert.Contains(t, buf.String(), `err.message="no access"`, "slog: the public message")
	assert.Contains(t, buf.String(), "CANARY bind failed", "slog, on the server side, has the cause")

	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, (*errs.Error)(nil).Public(), "a nil *Error is internal")
}

func TestNormalizeCall(t *testing.T) {
	live := context.Background()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()

	wrapped := fmt.Errorf("query CANARY: %w", context.Canceled)
	deadline := errors.Join(errors.New("CANARY"), context.DeadlineExceeded)
	for _, err := range []error{wrapped, deadline, context.Canceled} {
		pub, scrubbed := errs.Normalizer{}.NormalizeCall(live, err)
		assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, pub, "%v: a context error the live call does not explain is raw", err)
		assert.True(t, scrubbed, "%v: scrubbed while the call is live", err)
	}
	for _, ctx := range []context.Context{canceled, expired} {
		pub, scrubbed := errs.Normalizer{}.NormalizeCall(ctx, wrapped)
		assert.Equal(t, errs.CodeCanceled, pub.Code, "after the call ended a context error is public")
		assert.False(t, scrubbed, "and not scrubbed")
		pub, _ = errs.Normalizer{}.NormalizeCall(ctx, deadline)
		assert.Equal(t, errs.CodeTimeout, pub.Code, "the code follows the error")
	}
	pub, _ := errs.Normalizer{}.NormalizeCall(live, errs.NotFound("x").WithCause(context.Canceled))
	assert.Equal(t, errs.CodeNotFound, pub.Code, "a public error wins whatever the context")
	pub, _ = errs.Normalize(wrapped)
	assert.Equal(t, errs.CodeCanceled, pub.Code, "Normalize, which has no call, treats a context error as the call's")
}

// loop is an error whose chain leads back to it through an *errs.Error.
type loop struct{ e *errs.Error }

func (l *loop) Error() string { return "loop" }
func (l *loop) Unwrap() error { return l.e }

func TestDescribeAppendsHiddenPrivateCauses(t *testing.T) {
	raw := errors.New("CANARY pq: password authentication failed")
	err := fmt.Errorf("load: %w", errors.Join(errors.New("other"), errs.NotFound("no such invoice").WithCause(raw)))
	assert.NotContains(t, err.Error(), "CANARY", "the wrapper's text has the public message only")
	assert.Equal(t, "load: other\nno such invoice [cause of not_found: CANARY pq: password authentication failed]", errs.Describe(err),
		"the server-side description names the private cause")
	assert.Equal(t, "panic: load: other\nno such invoice [cause of not_found: CANARY pq: password authentication failed]", errs.NewPanicError(err).Error(),
		"so does a panic's text")

	l := &loop{}
	l.e = errs.Internal("x").WithCause(l)
	var got string
	require.NotPanics(t, func() { got = errs.Describe(l) }, "a cause that wraps its wrapper terminates")
	assert.Contains(t, got, "loop [cause of internal: loop", "and is described")
}

func TestPanicOf(t *testing.T) {
	pe := errs.NewPanicError("p")
	var typedNil *errs.PanicError
	assert.Same(t, pe, errs.PanicOf(pe), "direct")
	assert.Same(t, pe, errs.PanicOf(fmt.Errorf("w: %w", pe)), "wrapped")
	assert.Same(t, pe, errs.PanicOf(errors.Join(errors.New("x"), fmt.Errorf("w: %w", pe))), "joined")
	assert.Same(t, pe, errs.PanicOf(errors.Join(typedNil, pe)), "a typed nil is skipped")
	assert.Nil(t, errs.PanicOf(errors.New("x")), "no panic")
	assert.Nil(t, errs.PanicOf(nil), "nil")
	assert.Nil(t, errs.PanicOf(errors.Join(errors.New("x"))), "joined without a panic")
}

// TestDescribeIsBounded: a description is cut to errs.MaxDescribeBytes on a
// UTF-8 boundary, with the marker that says how long it was, whether the
// text is one huge Error or many private causes.
func TestDescribeIsBounded(t *testing.T) {
	huge := errors.New(strings.Repeat("é", 1<<20)) // 2 MiB, two bytes a rune
	d := errs.Describe(huge)
	require.LessOrEqual(t, len(d), errs.MaxDescribeBytes, "one huge Error text is cut")
	require.True(t, utf8.ValidString(d), "cut on a rune boundary")
	require.True(t, strings.HasSuffix(d, fmt.Sprintf("…[truncated %d bytes]", 2<<20)), "the marker says how long it was: %q", d[len(d)-40:])

	var many []error
	for i := range 2000 {
		many = append(many, fmt.Errorf("step %d: %w", i, errs.NotFound("gone").WithCause(errors.New(strings.Repeat("x", 1024)))))
	}
	d = errs.Describe(errors.Join(many...))
	require.LessOrEqual(t, len(d), errs.MaxDescribeBytes, "many private causes are cut")
	require.Contains(t, d, "…[truncated ", "with the marker")

	short := errors.New("short")
	require.Equal(t, "short", errs.Describe(short), "a short description is as it was")
}

// goexitError calls runtime.Goexit in Error, as t.FailNow in a test double
// would.
type goexitError struct{}

func (goexitError) Error() string { runtime.Goexit(); return "" }

// goexitStringer calls runtime.Goexit in String.
type goexitStringer struct{}

func (goexitStringer) String() string { runtime.Goexit(); return "" }

// TestDescribeSurvivesGoexit: a value whose Error or String calls
// runtime.Goexit is described by a placeholder, and the caller's goroutine
// goes on (the row that describes it is written).
func TestDescribeSurvivesGoexit(t *testing.T) {
	for name, v := range map[string]any{
		"Error":              goexitError{},
		"String":             goexitStringer{},
		"joined":             errors.Join(errors.New("load"), goexitError{}),
		"panic value":        errs.NewPanicError(goexitError{}),
		"errs.Error's cause": errs.NotFound("gone").WithCause(goexitError{}),
	} {
		done := make(chan string, 1)
		go func() {
			defer close(done)
			done <- errs.Describe(v)
		}()
		got, ok := <-done
		require.True(t, ok, "%s: Describe returned on the caller's goroutine", name)
		assert.Contains(t, got, "runtime.Goexit", "%s: the placeholder says why: %q", name, got)
	}
}

// blockingError's Error waits until release is closed (an Error that waits
// on a lock or a remote service).
type blockingError struct{ release chan struct{} }

func (e blockingError) Error() string { <-e.release; return "late" }

// TestDescribeBoundedWhenErrorBlocks: a value whose Error blocks is
// described by a placeholder once errs.MaxDescribeTime has passed, so the
// row that describes it is written and the call answered.
func TestDescribeBoundedWhenErrorBlocks(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	done := make(chan string, 1)
	go func() { done <- errs.Describe(errors.Join(errors.New("load"), blockingError{release})) }()
	select {
	case got := <-done:
		assert.Contains(t, got, "did not return within", "the placeholder says why: %q", got)
	case <-time.After(30 * time.Second):
		t.Fatal("Describe blocked with the value's Error")
	}
}

func BenchmarkDescribe(b *testing.B) {
	for name, v := range map[string]any{
		"plain":  fmt.Errorf("load invoice 42: %w", errors.New("connection refused")),
		"custom": errors.Join(errors.New("a"), errors.New("b")),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = errs.Describe(v)
			}
		})
	}
}

// BenchmarkNormalize is the rules alone, on the errors a chain's error
// paths meet most: a raw one, a public one, one wrapped with %w; "call" is
// NormalizeCall with the call's context live (what a chain's Normalize
// does), "ended" Normalize (rule 4 applies, so two more walks).
func BenchmarkNormalize(b *testing.B) {
	live := context.Background()
	for _, c := range []struct {
		name string
		err  error
	}{
		{"raw", errors.New("dial tcp 10.0.0.5:5432: connection refused")},
		{"public", errs.NotFound("no such record")},
		{"wrapped-raw", fmt.Errorf("load invoice 42: %w", errors.New("connection refused"))},
	} {
		b.Run(c.name+"/call", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = errs.Normalizer{}.NormalizeCall(live, c.err)
			}
		})
		b.Run(c.name+"/ended", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = errs.Normalize(c.err)
			}
		})
	}
}
