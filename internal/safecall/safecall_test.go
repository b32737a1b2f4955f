package safecall_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/internal/safecall"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCallReturns(t *testing.T) {
	ran, faults := false, 0
	fault, ok := safecall.Call(func() { ran = true }, func(safecall.Fault) { faults++ })
	assert.True(t, ran, "f runs")
	assert.True(t, ok, "a return is ok")
	assert.Zero(t, fault, "no fault")
	assert.Zero(t, faults, "onFault is not called when f returns")
}

// A panic is stopped, handed to onFault once while the panicking frames are
// still on the stack, and returned.
func TestCallStopsAPanic(t *testing.T) {
	boom := errors.New("boom")
	var seen []safecall.Fault
	var stack string
	fault, ok := safecall.Call(panicker(boom), func(f safecall.Fault) {
		seen = append(seen, f)
		buf := make([]byte, 64<<10)
		stack = string(buf[:runtime.Stack(buf, false)])
	})
	assert.False(t, ok, "a panic is not a return")
	assert.Equal(t, safecall.Fault{Value: boom}, fault, "the fault holds the panic value")
	require.Len(t, seen, 1, "onFault runs once")
	assert.Equal(t, fault, seen[0], "onFault gets the fault Call returns")
	assert.Contains(t, stack, "safecall_test.panicker", "onFault runs before the panicking frames are gone")
	_, ok = safecall.Call(panicker(boom), nil)
	assert.False(t, ok, "a nil onFault is allowed")
}

//go:noinline
func panicker(v any) func() { return func() { panic(v) } }

func TestCallPanicNilIsAPanic(t *testing.T) {
	fault, ok := safecall.Call(func() { panic(nil) }, nil)
	assert.False(t, ok)
	assert.False(t, fault.Goexit, "panic(nil) is a panic, not a Goexit")
	var pn *runtime.PanicNilError
	assert.ErrorAs(t, fault.Value.(error), &pn, "recovered as a *runtime.PanicNilError")
}

// A Goexit cannot be stopped: onFault hears of it, the goroutine's deferred
// calls run, and Call does not return.
func TestCallReportsGoexitAndLetsItGoOn(t *testing.T) {
	var seen []safecall.Fault
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		safecall.Call(runtime.Goexit, func(f safecall.Fault) { seen = append(seen, f) })
		returned = true
	}()
	<-done
	assert.Equal(t, []safecall.Fault{{Goexit: true}}, seen, "onFault hears of the Goexit once")
	assert.False(t, returned, "the Goexit went on: Call did not return")
}

func TestObserveLetsThePanicGoOn(t *testing.T) {
	boom := errors.New("boom")
	var seen []safecall.Fault
	assert.PanicsWithValue(t, boom, func() {
		safecall.Observe(panicker(boom), func(f safecall.Fault) { seen = append(seen, f) })
	}, "the panic goes on with its value")
	assert.Equal(t, []safecall.Fault{{Value: boom}}, seen, "onFault saw it once")

	seen = nil
	safecall.Observe(func() {}, func(f safecall.Fault) { seen = append(seen, f) })
	assert.Empty(t, seen, "a return is no fault")
}

func TestObserveLetsTheGoexitGoOn(t *testing.T) {
	var seen []safecall.Fault
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		safecall.Observe(runtime.Goexit, func(f safecall.Fault) { seen = append(seen, f) })
		returned = true
	}()
	<-done
	assert.Equal(t, []safecall.Fault{{Goexit: true}}, seen)
	assert.False(t, returned, "the Goexit went on")
}

func TestReporterReportsOnce(t *testing.T) {
	var buf bytes.Buffer
	r := safecall.Reporter{
		Logger:   slog.New(slog.NewTextHandler(&buf, nil)),
		Describe: func(v any) string { return "described:" + v.(string) },
	}
	attrsCalled := 0
	attrs := func() []slog.Attr { attrsCalled++; return []slog.Attr{slog.String("call_id", "c-1")} }

	assert.True(t, r.Call(context.Background(), "hook panicked", func() {}, attrs), "a return")
	assert.Zero(t, attrsCalled, "the attributes are built only on a fault")
	assert.Empty(t, buf.String(), "nothing to report")

	assert.False(t, r.Call(context.Background(), "hook panicked", panicker("CANARY"), attrs), "a panic")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 1, "reported once")
	assert.Contains(t, lines[0], `msg="hook panicked"`)
	assert.Contains(t, lines[0], "panic=described:CANARY", "the value as Describe renders it")
	assert.Contains(t, lines[0], "call_id=c-1", "with the caller's attributes")
	assert.Contains(t, lines[0], "level=ERROR")
}

func TestReporterGoexit(t *testing.T) {
	var buf bytes.Buffer
	r := safecall.Reporter{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Call(context.Background(), "sink panicked", runtime.Goexit, nil)
	}()
	<-done
	assert.Equal(t, 1, strings.Count(buf.String(), "panic=runtime.Goexit"), "a Goexit is reported once, by that name")
}

type loud struct{}

func (loud) String() string { panic("a method called") }

// Without Describe the value is named by its type: none of its methods run.
func TestReporterWithoutDescribe(t *testing.T) {
	var buf bytes.Buffer
	r := safecall.Reporter{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	r.Report(context.Background(), "m", safecall.Fault{Value: loud{}})
	assert.Contains(t, buf.String(), "panic=safecall_test.loud")
}

type panickingHandler struct{ slog.Handler }

func (panickingHandler) Handle(context.Context, slog.Record) error { panic("the log handler broke") }

func TestReporterSurvivesAPanickingLogger(t *testing.T) {
	r := safecall.Reporter{Logger: slog.New(panickingHandler{slog.NewTextHandler(&bytes.Buffer{}, nil)})}
	assert.NotPanics(t, func() {
		r.Call(context.Background(), "m", panicker("x"), nil)
	}, "a broken fallback logger does not turn a stopped panic into a new one")
}

// The safe call costs no allocation on the path where f returns, closures
// included.
func TestCallAllocatesNothing(t *testing.T) {
	var r safecall.Reporter
	n := 0
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		safecall.Call(func() { n++ }, func(safecall.Fault) { n-- })
		safecall.Observe(func() { n++ }, func(safecall.Fault) { n-- })
		r.Call(ctx, "m", func() { n++ }, func() []slog.Attr { return []slog.Attr{slog.Int("n", n)} })
	})
	assert.Zero(t, allocs)
}

func BenchmarkCall(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		safecall.Call(func() { n++ }, func(safecall.Fault) { n-- })
	}
}

// The deferred form: Stop stops a panic and lets the function's named
// results be set; Observe lets it go on; a return is no fault.
func TestScope(t *testing.T) {
	stop := func(v any) (got safecall.Fault, res string) {
		var s safecall.Scope
		defer s.Stop(func(f safecall.Fault) { got, res = f, "recovered" })
		if v != nil {
			panic(v)
		}
		res = "returned"
		s.Returned()
		return got, res
	}
	f, res := stop(nil)
	assert.Equal(t, "returned", res)
	assert.Zero(t, f)
	f, res = stop("boom")
	assert.Equal(t, "recovered", res, "onFault set the result")
	assert.Equal(t, safecall.Fault{Value: "boom"}, f)

	var seen []safecall.Fault
	observe := func(v any) {
		var s safecall.Scope
		defer s.Observe(func(f safecall.Fault) { seen = append(seen, f) })
		if v != nil {
			panic(v)
		}
		s.Returned()
	}
	observe(nil)
	assert.Empty(t, seen, "a return is no fault")
	assert.PanicsWithValue(t, "boom", func() { observe("boom") }, "the panic goes on")
	assert.Equal(t, []safecall.Fault{{Value: "boom"}}, seen)

	seen = nil
	done := make(chan struct{})
	go func() {
		defer close(done)
		var s safecall.Scope
		defer s.Stop(func(f safecall.Fault) { seen = append(seen, f) })
		runtime.Goexit()
	}()
	<-done
	assert.Equal(t, []safecall.Fault{{Goexit: true}}, seen, "a Goexit is handed on, and goes on")
}

// A Scope adds no frame to the stack a panic below it records.
func TestScopeAddsNoFrame(t *testing.T) {
	var stack string
	func() {
		var s safecall.Scope
		defer s.Stop(func(safecall.Fault) {
			buf := make([]byte, 64<<10)
			stack = string(buf[:runtime.Stack(buf, false)])
		})
		panicker("x")()
		s.Returned()
	}()
	before, _, _ := strings.Cut(stack, "panic(")
	assert.NotContains(t, stack[len(before):], "internal/safecall.", "no frame of safecall between the panic and the guarded function (Call would add two)")
}

func TestScopeAllocatesNothing(t *testing.T) {
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		var s safecall.Scope
		defer s.Observe(func(safecall.Fault) { n-- })
		n++
		s.Returned()
	})
	assert.Zero(t, allocs)
}

// Handle stops a panic when onFault says so and lets it go on otherwise.
func TestScopeHandle(t *testing.T) {
	run := func(stop bool) (got []safecall.Fault) {
		var s safecall.Scope
		defer s.Handle(func(f safecall.Fault) bool { got = append(got, f); return stop })
		panic("boom")
	}
	assert.Equal(t, []safecall.Fault{{Value: "boom"}}, run(true), "stopped")
	assert.PanicsWithValue(t, "boom", func() { run(false) }, "goes on")
	ok := func() (n int) {
		var s safecall.Scope
		defer s.Handle(func(safecall.Fault) bool { n++; return true })
		s.Returned()
		return n
	}()
	assert.Zero(t, ok, "a return is no fault")
}
