package middleware

import (
	"hash/maphash"
	"sync"
	"time"
)

// keyTable maps a caller's key (a subject, a session, a tool: whatever the
// user's key function returns) to per-key state, with a bound on how many
// keys it holds, so that a client that invents keys cannot grow the
// server's memory: the rate limiter's token buckets and the bulkhead's
// per-key slots live in one.
//
// An entry idle for longer than ttl is expired when room is needed; when
// nothing has expired (or ttl is zero: entries do not age), an arbitrary
// evictable entry is dropped. The table starts no goroutine: expiry happens
// on insertion.
type keyTable[V any] struct {
	shards   []tableShard[V]
	seed     maphash.Seed
	perShard int
	ttl      int64 // nanoseconds of the table's monotonic clock
	// evictable reports whether an entry's state may be dropped (nil:
	// always); it is called with the shard locked.
	evictable func(*V) bool
	// init fills the state of a new entry, with the shard locked.
	init func(*V)
}

type tableShard[V any] struct {
	mu        sync.Mutex
	m         map[string]*tableEntry[V]
	lastSweep int64
	_         [40]byte // keep shards on separate cache lines
}

type tableEntry[V any] struct {
	v    V
	last int64 // when it was last used, on the table's clock
}

// tableShards is how many shards a table of at least 256 keys has.
const tableShards = 16

func newKeyTable[V any](maxKeys int, ttl time.Duration, init func(*V), evictable func(*V) bool) *keyTable[V] {
	n := 1
	if maxKeys >= 256 {
		n = tableShards
	}
	t := &keyTable[V]{
		shards:    make([]tableShard[V], n),
		seed:      maphash.MakeSeed(),
		perShard:  (maxKeys + n - 1) / n,
		ttl:       int64(ttl),
		evictable: evictable,
		init:      init,
	}
	for i := range t.shards {
		t.shards[i].m = make(map[string]*tableEntry[V])
	}
	return t
}

// lock returns the entry of key, created if needed, with its shard locked:
// the caller uses the entry and then unlocks the returned shard. The entry
// is nil (and the shard still locked) when the table is full and no entry
// can be dropped.
func (t *keyTable[V]) lock(key string, now int64) (*tableEntry[V], *sync.Mutex) {
	s := &t.shards[0]
	if len(t.shards) > 1 {
		s = &t.shards[maphash.String(t.seed, key)%uint64(len(t.shards))]
	}
	s.mu.Lock()
	if e := s.m[key]; e != nil {
		e.last = now
		return e, &s.mu
	}
	if len(s.m) >= t.perShard && !t.makeRoom(s, now) {
		return nil, &s.mu
	}
	e := &tableEntry[V]{last: now}
	if t.init != nil {
		t.init(&e.v)
	}
	s.m[key] = e
	return e, &s.mu
}

// makeRoom drops expired entries (at most once per quarter of ttl; never
// with a zero ttl), or else one arbitrary evictable entry; it reports
// whether there is room.
func (t *keyTable[V]) makeRoom(s *tableShard[V], now int64) bool {
	if t.ttl > 0 && now-s.lastSweep >= t.ttl/4 {
		s.lastSweep = now
		for k, e := range s.m {
			if now-e.last > t.ttl && t.canEvict(e) {
				delete(s.m, k)
			}
		}
		if len(s.m) < t.perShard {
			return true
		}
	}
	for k, e := range s.m { // map iteration starts at a random entry
		if t.canEvict(e) {
			delete(s.m, k)
			return true
		}
	}
	return false
}

func (t *keyTable[V]) canEvict(e *tableEntry[V]) bool {
	return t.evictable == nil || t.evictable(&e.v)
}

// len is how many keys the table holds.
func (t *keyTable[V]) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}
