package contain

import (
	"iter"
	"sync"
)

// Runner is what [Do] runs: a pointer that implements it converts to the
// interface without an allocation, which a method value (x.Run passed as
// a func) does not.
type Runner interface {
	Run()
}

// Run calls f and returns once f has returned, panicked or called
// runtime.Goexit. escaped reports that f did not return; v is then what
// recover returned (nil for a Goexit). Run(f) is Do(f) with f as a
// [Runner].
func Run(f func()) (v any, escaped bool) {
	return Do(funcRunner(f))
}

// funcRunner is a func as a [Runner]: a func value is one pointer, so the
// conversion does not allocate.
type funcRunner func()

func (f funcRunner) Run() { f() }

// Do calls r.Run and returns once it has returned, panicked or called
// runtime.Goexit, as [Run] does.
//
// r runs on a coroutine (iter.Pull): the caller's thread switches to it
// and back without the scheduler, so no other thread is woken, which a
// go statement and a wait would do on every call. The coroutine's stack is
// grown once, before r runs, to 16 KiB (see reserve). A Goexit cannot be
// stopped; r's coroutine hands control back in the middle of it, and a
// goroutine of its own lets it finish.
//
// What Do itself needs between the caller and the coroutine (r, the
// outcome, and the function iter.Pull runs) lives in a pooled state, so
// that a call allocates only what iter.Pull does: 6 allocations, 192 B
// (go test -bench 'Do$' -memprofile, Go 1.26: its state, the coroutine
// and its function, next, stop and yield), the floor of a coroutine per
// call. iter.Pull is the only way to make one: the linker lets no package
// but iter reach runtime.newcoro and runtime.coroswitch
// (cmd/link/internal/loader's blockedLinknames). The coroutine itself
// cannot be pooled: the runtime ends the process ("coro: OS thread locking
// must match locking at coroutine creation", runtime/coro.go) when a
// goroutine locked to its thread resumes a coroutine another goroutine
// made, or the other way round, and whether the caller is locked cannot be
// known.
func Do(r Runner) (v any, escaped bool) {
	s := states.Get().(*state)
	s.r = r
	next, stop := iter.Pull(s.seq)
	next()
	if s.goexit {
		// The coroutine is still in its Goexit and holds s: s is not
		// reused.
		go stop()
		return nil, true
	}
	stop()
	v, escaped = s.v, s.escaped
	*s = state{seq: s.seq}
	states.Put(s)
	return v, escaped
}

// state is one Do's, between the caller and the coroutine.
type state struct {
	r        Runner
	v        any
	escaped  bool
	returned bool
	goexit   bool
	// seq is s.body, made once per state: a method value allocates.
	seq iter.Seq[struct{}]
}

// states holds the idle states; New makes one with its seq.
var states = sync.Pool{New: func() any {
	s := new(state)
	s.seq = s.body
	return s
}}

// body is the coroutine's function: it reserves the coroutine's stack,
// runs r and, when r did not return, records why.
func (s *state) body(yield func(struct{}) bool) {
	reserve(false)
	defer s.catch(yield)
	s.r.Run()
	s.returned = true
}

// reserveFrame is the frame reserve declares: a coroutine's stack starts
// at 2 KiB, and the runtime grows it to the next power of two that holds
// the frame and its guard, 16 KiB.
const reserveFrame = 8 << 10

// reserve grows the calling goroutine's stack, in a single copy, to hold
// reserveFrame, and touches none of it. It is the coroutine's first call,
// so that the copy adjusts three frames: a tools/call run on a new
// coroutine's small stack otherwise grows it several times deep inside the
// SDK and the chain, each time copying and adjusting every frame in use,
// and the adjusting is most of a copy's cost (runtime.adjustframe, one
// pcvalue lookup per frame). The frame is only declared: touching is
// false at every call, which the compiler cannot know, so the frame is
// part of reserve's (and checked by its prologue) but never zeroed, where
// a used frame would be zeroed at every call.
//
//go:noinline
func reserve(touch bool) {
	if touch {
		var frame [reserveFrame]byte
		keep(frame[:])
	}
}

// keep is a call the compiler cannot see through, so that reserve's frame
// is really part of its stack frame.
//
//go:noinline
func keep([]byte) {}

// catch is deferred by body. For a Goexit (recover returns nil) it hands
// control back to Do in the middle of the Goexit, which goes on when Do's
// goroutine calls stop.
func (s *state) catch(yield func(struct{}) bool) {
	if s.returned {
		return
	}
	s.v, s.escaped = recover(), true
	if s.v == nil {
		s.goexit = true
		yield(struct{}{})
	}
}
