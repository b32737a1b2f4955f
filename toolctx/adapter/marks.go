package adapter

import (
	"context"
	"reflect"
	"sync"
	"unsafe"
)

// Marks tells which calls entered an adapter's middleware, for an SDK whose
// hooks also see the calls it rejects before any middleware (mcp-go; see
// docs/adapters/mcpgo.md), so that the chain runs once for each call and
// whether a call was rejected is told by where its answer came from, never
// by its text. A mark is keyed by the call's context, which the SDK must
// hand its hooks and the middleware alike; a context that is not a pointer
// (every one the standard library makes is) is never marked. A nil *Marks
// marks nothing. The zero Marks is ready; it is safe for concurrent use.
//
// Every tools/call opens, enters and closes a mark, so a mark costs no
// allocation once the maps have grown to the calls in flight: plain maps
// of booleans, each behind its own lock, the call's context picking the
// map by its address so that concurrent calls seldom share a lock. (A
// sync.Map allocated an entry and a flag per call: 64 B and two
// allocations.)
type Marks struct {
	shards [markShards]markShard
}

// markShards is how many locks the marks are spread over.
const markShards = 16

type markShard struct {
	mu sync.Mutex
	m  map[context.Context]bool // open marks: whether the call entered
	_  [48]byte                 // a shard to a 64-byte cache line: no false sharing between locks
}

// shard is the shard of ctx, a pointer (see pointer): its address picks
// it, past the low bits that allocation alignment leaves zero.
func (m *Marks) shard(ctx context.Context) *markShard {
	addr := uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&ctx))[1]) // an interface's data word: the pointer itself
	return &m.shards[(addr>>5)%markShards]
}

// Open opens the mark of the call of ctx, before the middleware may run.
func (m *Marks) Open(ctx context.Context) {
	if m == nil || !pointer(ctx) {
		return
	}
	s := m.shard(ctx)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[context.Context]bool)
	}
	s.m[ctx] = false
	s.mu.Unlock()
}

// Enter records, from the middleware, that the call of ctx entered it.
func (m *Marks) Enter(ctx context.Context) {
	if m == nil || !pointer(ctx) {
		return
	}
	s := m.shard(ctx)
	s.mu.Lock()
	if _, open := s.m[ctx]; open {
		s.m[ctx] = true
	}
	s.mu.Unlock()
}

// Entered closes the call's mark and reports whether the call entered the
// middleware.
func (m *Marks) Entered(ctx context.Context) bool {
	if m == nil || !pointer(ctx) {
		return false
	}
	s := m.shard(ctx)
	s.mu.Lock()
	entered := s.m[ctx]
	delete(s.m, ctx)
	s.mu.Unlock()
	return entered
}

// pointer reports whether ctx can be a map key: a comparable struct may
// still hold an interface whose value cannot be hashed.
func pointer(ctx context.Context) bool {
	t := reflect.TypeOf(ctx)
	return t != nil && t.Kind() == reflect.Pointer
}
