package adapter

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// maxSchemas bounds the compilations a [SchemaCache] keeps; past it, the
// cache starts over.
const maxSchemas = 512

// SchemaCache remembers what an adapter compiled of its tools' schemas
// (the input schemas go-sdk's adapter checks arguments with, the output
// schemas mcp-go's checks results with), so that a schema is compiled once
// and not on every call. An entry is keyed by what names the schema (a
// tool's name, or the tool table's pointers) and keeps the schema's JSON it
// was compiled from: a schema asked for again under the same key with
// other JSON (a tool registered again with another schema) is compiled
// again, never served the old compilation. A compilation that fails is
// remembered too, with its error: the same JSON fails again. The zero
// SchemaCache is ready and a nil one compiles every time; it is safe for
// concurrent use, and a lookup that finds its schema does not allocate.
type SchemaCache[K comparable, V any] struct {
	m sync.Map // K -> *compiledSchema[V]
	n atomic.Int32
}

type compiledSchema[V any] struct {
	raw []byte
	v   V
	err error
}

// Get returns what compile returned for the schema under k, whose JSON is
// raw (nil when k alone tells the schema, a pointer to it, say), calling
// compile when k has no entry or one compiled from other JSON.
func (c *SchemaCache[K, V]) Get(k K, raw []byte, compile func() (V, error)) (V, error) {
	if c == nil {
		return compile()
	}
	if e, ok := c.m.Load(k); ok {
		if e := e.(*compiledSchema[V]); bytes.Equal(e.raw, raw) {
			return e.v, e.err
		}
	}
	v, err := compile()
	if c.n.Add(1) > maxSchemas {
		c.m.Clear() // tools registered again and again: the old keys go
		c.n.Store(1)
	}
	c.m.Store(k, &compiledSchema[V]{raw: bytes.Clone(raw), v: v, err: err})
	return v, err
}
