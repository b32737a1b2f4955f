package audit

import "sync/atomic"

// ring is the writer's queue: a bounded multi-producer, single-consumer
// ring of rows (Vyukov's bounded queue). A push is one compare-and-swap
// and a copy, and wakes nobody: the dispatcher is signalled once per batch
// (see Async.emit), not once per row, because waking a goroutine parked on
// a channel costs a futex call and, on a virtual machine, several
// microseconds of the calling thread's time.
//
// A channel of rows did exactly that on every row: with it, the audit
// interceptor cost 1.2 µs per call over its baseline (`go test ./bench
// -run '^$' -bench 'Chain/audit$' -benchtime 1000000x`, 2026-12-01), and
// mcp-go's in-process calls 15 µs more (a wakeup each).
//
// The rows, their done channels and their sequence numbers are three
// arrays, not one array of slots: the dispatcher takes a run of rows with
// one bulk copy into its batch and one bulk clear, instead of a copy out
// of each slot, a copy into the batch and a clear of the slot, row by row
// (a row is a few hundred bytes).
type ring struct {
	rows  []Record
	dones []chan struct{} // Sync: signalled once the row is durable or accounted for
	seqs  []atomic.Uint64
	size  uint64
	_     [48]byte      // tail on a cache line of its own, away from what the consumer reads
	tail  atomic.Uint64 // next position to reserve (producers)
	_     [56]byte
	head  atomic.Uint64 // next position to read (the consumer; read by len)
}

// newRing returns a ring that holds n rows.
func newRing(n int) *ring {
	q := &ring{rows: make([]Record, n), dones: make([]chan struct{}, n), seqs: make([]atomic.Uint64, n), size: uint64(n)}
	for i := range q.seqs {
		q.seqs[i].Store(uint64(i))
	}
	// Touch the rows' pages now: a large allocation comes from the system
	// unmapped, and the first lap of calls would otherwise take a page
	// fault every dozen rows (on a virtual machine, microseconds each).
	clear(q.rows)
	return q
}

// push copies the row r (and done) into the ring and returns its position
// plus one, or 0 when the ring is full.
func (q *ring) push(r *Record, done chan struct{}) uint64 {
	pos := q.tail.Load()
	for {
		i := pos % q.size
		seq := q.seqs[i].Load()
		switch d := int64(seq - pos); {
		case d == 0:
			if q.tail.CompareAndSwap(pos, pos+1) {
				q.rows[i], q.dones[i] = *r, done
				q.seqs[i].Store(pos + 1) // publish
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

// popInto appends to batch the oldest published rows, at most max, and to
// waiters their done channels that are not nil, and returns both; none
// when the ring is empty or the oldest slot is reserved but not yet
// written. The rows move with one copy, and their slots are cleared (no
// reference to the rows' strings and maps stays behind) before they are
// released to the producers. Only one goroutine may pop.
func (q *ring) popInto(batch []Record, waiters []chan struct{}, max int) ([]Record, []chan struct{}) {
	pos := q.head.Load()
	i := pos % q.size
	n := uint64(0)
	limit := min(uint64(max), q.size-i) // a run does not wrap
	for n < limit && q.seqs[i+n].Load() == pos+n+1 {
		n++
	}
	if n == 0 {
		return batch, waiters
	}
	batch = append(batch, q.rows[i:i+n]...)
	clear(q.rows[i : i+n])
	for j, d := range q.dones[i : i+n] {
		if d != nil {
			waiters = append(waiters, d)
			q.dones[i+uint64(j)] = nil
		}
	}
	for k := uint64(0); k < n; k++ {
		q.seqs[i+k].Store(pos + k + q.size)
	}
	q.head.Store(pos + n)
	return batch, waiters
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
