package otelmw

import (
	"sync"
	"sync/atomic"
)

// maxCached bounds the cache of series. Tool names, protocol versions and
// codes are few on a real server, but a name comes from the client before
// the SDK says whether the tool exists (an unknown tool's series is
// dropped after its call), and so does the version: past the bound, a
// series is computed on every call instead of remembered.
const maxCached = 4096

// boundedCache is a concurrent map that stops growing at maxCached entries.
type boundedCache[K comparable, V any] struct {
	m sync.Map
	n atomic.Int64
}

func (c *boundedCache[K, V]) get(k K) (V, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (c *boundedCache[K, V]) put(k K, v V) {
	if c.n.Load() >= maxCached {
		return
	}
	if _, loaded := c.m.LoadOrStore(k, v); !loaded {
		c.n.Add(1)
	}
}

// drop removes k, if it is there.
func (c *boundedCache[K, V]) drop(k K) {
	if _, loaded := c.m.LoadAndDelete(k); loaded {
		c.n.Add(-1)
	}
}
