package otelmw

import (
	"sync"
	"sync/atomic"
)

// maxCached bounds each cache. Tool names, protocol versions and codes are
// few on a real server, but a name comes from the client before the SDK
// says whether the tool exists: past the bound, values are computed on
// every call instead of remembered.
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
