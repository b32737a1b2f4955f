package adapter

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
)

// Marks tells which calls entered an adapter's middleware, for an SDK whose
// hooks also see the calls it rejects before any middleware (mcp-go; see
// docs/adapters/mcpgo.md), so that the chain runs once for each call and
// whether a call was rejected is told by where its answer came from, never
// by its text. A mark is keyed by the call's context, which the SDK must
// hand its hooks and the middleware alike; a context that is not a pointer
// (every one the standard library makes is) is never marked. A nil *Marks
// marks nothing. The zero Marks is ready; it is safe for concurrent use.
type Marks struct{ m sync.Map }

// Open opens the mark of the call of ctx, before the middleware may run.
func (m *Marks) Open(ctx context.Context) {
	if m != nil && pointer(ctx) {
		m.m.Store(ctx, new(atomic.Bool))
	}
}

// Enter records, from the middleware, that the call of ctx entered it.
func (m *Marks) Enter(ctx context.Context) {
	if m == nil || !pointer(ctx) {
		return
	}
	if v, ok := m.m.Load(ctx); ok {
		v.(*atomic.Bool).Store(true)
	}
}

// Entered closes the call's mark and reports whether the call entered the
// middleware.
func (m *Marks) Entered(ctx context.Context) bool {
	if m == nil || !pointer(ctx) {
		return false
	}
	v, ok := m.m.LoadAndDelete(ctx)
	return ok && v.(*atomic.Bool).Load()
}

// pointer reports whether ctx can be a map key: a comparable struct may
// still hold an interface whose value cannot be hashed.
func pointer(ctx context.Context) bool {
	t := reflect.TypeOf(ctx)
	return t != nil && t.Kind() == reflect.Pointer
}
