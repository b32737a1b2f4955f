package audit

import (
	"sync/atomic"
)

// ring is a bounded multi-producer, single-consumer queue of Records
// (Vyukov's bounded queue): a producer reserves a slot with one CAS, copies
// the row in and publishes it; the consumer copies it out. No lock, no
// allocation, and producers do not wake the consumer.
type ring struct {
	slots []slot
	mask  uint64
	_     [56]byte
	tail  atomic.Uint64 // next position to reserve (producers)
	_     [56]byte
	head  atomic.Uint64 // next position to read (the consumer; read by Len)
}

type slot struct {
	seq atomic.Uint64
	rec Record
}

// newRing returns a ring of at least n slots (a power of two).
func newRing(n int) *ring {
	size := uint64(1)
	for size < uint64(n) {
		size <<= 1
	}
	q := &ring{slots: make([]slot, size), mask: size - 1}
	for i := range q.slots {
		q.slots[i].seq.Store(uint64(i))
	}
	return q
}

// push copies *r into the ring and returns its position plus one, or 0 when
// the ring is full.
func (q *ring) push(r *Record) uint64 {
	pos := q.tail.Load()
	for {
		s := &q.slots[pos&q.mask]
		seq := s.seq.Load()
		switch d := int64(seq - pos); {
		case d == 0:
			if q.tail.CompareAndSwap(pos, pos+1) {
				s.rec = *r
				s.seq.Store(pos + 1) // publish
				return pos + 1
			}
			pos = q.tail.Load()
		case d < 0:
			return 0 // full: the slot still holds a row from a lap ago
		default:
			pos = q.tail.Load() // another producer took it
		}
	}
}

// pop moves the oldest published row into *dst; false when there is none
// (the ring is empty, or the oldest slot is reserved but not yet written).
// Only one goroutine may pop.
func (q *ring) pop(dst *Record) bool {
	pos := q.head.Load()
	s := &q.slots[pos&q.mask]
	if s.seq.Load() != pos+1 {
		return false
	}
	*dst = s.rec
	s.rec = Record{} // drop references to the row's strings and maps
	s.seq.Store(pos + q.mask + 1)
	q.head.Store(pos + 1)
	return true
}

// len returns how many slots are reserved or full now.
func (q *ring) len() int {
	h := q.head.Load()
	t := q.tail.Load()
	if t < h {
		return 0
	}
	return int(t - h)
}
