package adapter

import "sync"

// maxMemo bounds the entries a [Memo] keeps; when it is full it starts
// over.
const maxMemo = 512

// Memo remembers what compile returned for a key (an adapter's compiled
// schemas, say), so that it is computed once. The zero Memo is empty and
// ready; it is safe for concurrent use.
type Memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// Get returns the value remembered for k, or compile's, remembered when
// compile returns no error.
func (m *Memo[K, V]) Get(k K, compile func() (V, error)) (V, error) {
	m.mu.Lock()
	v, hit := m.m[k]
	m.mu.Unlock()
	if hit {
		return v, nil
	}
	v, err := compile()
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	if m.m == nil || len(m.m) >= maxMemo {
		m.m = make(map[K]V)
	}
	m.m[k] = v
	m.mu.Unlock()
	return v, nil
}
