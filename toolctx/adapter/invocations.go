package adapter

import (
	"context"
	"sync/atomic"
)

// Invocations holds an adapter's state for each run of its terminal handler
// in one call: a retrying interceptor may run the terminal more than once,
// and concurrently. The first run's state is part of Invocations (no
// allocation of its own). The zero Invocations is ready; it must not be
// copied once used.
type Invocations[T any] struct {
	n     atomic.Int32
	first Invocation[T]
	last  atomic.Pointer[Invocation[T]]
}

// Invocation is one run of an adapter's terminal handler: the terminal's
// context carrying the run (for [InvocationFrom]), and the adapter's State.
type Invocation[T any] struct {
	context.Context
	State T
}

type invocationKey[T any] struct{}

// Value answers InvocationFrom's key, and the terminal's context's otherwise.
func (r *Invocation[T]) Value(key any) any {
	if _, ok := key.(invocationKey[T]); ok {
		return r
	}
	return r.Context.Value(key)
}

// Start begins a run of the terminal, whose context is ctx: the SDK's
// handler gets the run as its context.
func (r *Invocations[T]) Start(ctx context.Context) *Invocation[T] {
	run := &r.first
	if r.n.Add(1) > 1 {
		run = new(Invocation[T]) // a retry, perhaps concurrent with the first run
	}
	run.Context = ctx
	return run
}

// Done records that run has returned: until another run returns, it is
// [Invocations.Last].
func (r *Invocations[T]) Done(run *Invocation[T]) { r.last.Store(run) }

// Last returns the run that returned last, or nil before one has.
func (r *Invocations[T]) Last() *Invocation[T] { return r.last.Load() }

// InvocationFrom returns the run whose context ctx is or derives from (the SDK's
// handler, a tool the adapter registered, looks up its run so), or nil.
func InvocationFrom[T any](ctx context.Context) *Invocation[T] {
	r, _ := ctx.Value(invocationKey[T]{}).(*Invocation[T])
	return r
}
