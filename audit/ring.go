package audit

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

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
// The ring is also the batches' memory: the dispatcher takes a run of
// published rows as a slice of the ring itself (take), hands it to the
// writer or the spool, and the slots go back to the producers only once
// the batch is written or spooled (release). A row is copied once, by its
// call, into its slot, and read in place from there; a copy into a batch
// buffer and the clear of that buffer cost a row another two passes over
// its cache lines (a few hundred bytes that the writer's core must pull
// from the caller's), the larger part of the writer's CPU per row.
//
// So that the batch being written and the one being handed over take no
// room from the calls, as separate buffers did not, the ring has room for
// them (extra slots) on top of the queue: a push is refused once the queue
// holds queue rows not yet taken, or when its slot is still held by a
// batch.
//
// The rows, their done channels and their sequence numbers are three
// arrays, not one array of slots: a batch is then a plain []Record.
type ring struct {
	rows  []Record
	dones []chan struct{} // Sync: signalled once the row is durable or accounted for
	seqs  []atomic.Uint64
	size  uint64        // slots
	div   divisor       // by size
	queue uint64        // rows not yet taken, at most
	_     [24]byte      // tail on a cache line of its own, away from what the consumer writes
	tail  atomic.Uint64 // next position to reserve (producers)
	_     [56]byte
	head  atomic.Uint64 // next position to take (the consumer; read by push and len)
	_     [56]byte
}

// newRing returns a ring that queues queue rows, with extra slots for the
// batches taken and not yet released.
func newRing(queue, extra int) *ring {
	n := queue + extra
	q := &ring{rows: make([]Record, n), dones: make([]chan struct{}, n), seqs: make([]atomic.Uint64, n), size: uint64(n), div: newDivisor(uint64(n)), queue: uint64(queue)}
	for i := range q.seqs {
		q.seqs[i].Store(uint64(i))
	}
	// Touch the rows' pages now: a large allocation comes from the system
	// unmapped, and the first lap of calls would otherwise take a page
	// fault every dozen rows (on a virtual machine, microseconds each).
	clear(q.rows)
	return q
}

// closedBit, set in tail by close, makes reserve refuse every slot from
// then on (push still takes them: see push). It is the top bit, which a
// position, counted in rows, never reaches.
const closedBit = 1 << 63

// close makes reserve refuse from now on: a producer that has not reserved
// its slot yet cannot any more, and one that has keeps it until it
// publishes. So the consumer, once tail minus head (len) is 0 after close,
// has every row reserved through reserve: the in-place path needs no count
// of the calls between their check and their reservation, which cost it two
// atomic additions on a line every producer shares.
func (q *ring) close() { q.tail.Or(closedBit) }

// push copies the row r (and done) into the ring and returns its position
// plus one, or 0 when the queue is full. It reserves after close too: its
// caller (Async.emit) counts itself in flight before it checks that the
// writer is open, and the dispatcher waits for it.
func (q *ring) push(r *Record, done chan struct{}) uint64 {
	i, pos, ok := q.reserveFrom(q.tail.Load(), true)
	if !ok {
		return 0
	}
	q.rows[i], q.dones[i] = *r, done
	q.publish(i, pos)
	return pos + 1
}

// reserve claims the slot of the next position, pos, at index i: the
// caller writes its row in q.rows[i] (and its done channel in q.dones[i])
// and then calls publish, which nothing may keep it from doing (the
// consumer waits for the slots in order). ok is false when the queue is
// full or closed.
func (q *ring) reserve() (i, pos uint64, ok bool) { return q.reserveFrom(q.tail.Load(), false) }

// reserveFrom is reserve, from t, a value of tail read before, and after
// close too when closedToo (push's way). The position is t without
// closedBit; t+1 keeps the bit as it was. By the
// time the loop reads head, other producers may have pushed past pos and
// the consumer taken their rows, so head may be ahead of pos. The queue is
// full only when pos is at least queue rows ahead of head; pos - head as an
// unsigned number wrapped around to a huge one there, and the row was
// refused as if the queue were full (a call preempted between the two
// loads lost its row: dropped, and with DurabilityDisk answered at once).
func (q *ring) reserveFrom(t uint64, closedToo bool) (uint64, uint64, bool) {
	for {
		if t&closedBit != 0 && !closedToo {
			return 0, 0, false // closed: the caller takes Async.emit's way, which knows it
		}
		pos := t &^ closedBit
		if int64(pos-q.head.Load()) >= int64(q.queue) {
			return 0, 0, false // full: queue rows wait to be taken (head only grows: a stale one errs on full)
		}
		i := q.div.mod(pos)
		seq := q.seqs[i].Load()
		switch d := int64(seq - pos); {
		case d == 0:
			if q.tail.CompareAndSwap(t, t+1) { // fails once close has set the bit
				return i, pos, true
			}
			t = q.tail.Load()
		case d < 0:
			return 0, 0, false // full: the slot still holds a row of a batch not yet released
		default:
			t = q.tail.Load() // another producer took it
		}
	}
}

// publish makes the row reserved at pos, in slot i, the consumer's.
func (q *ring) publish(i, pos uint64) { q.seqs[i].Store(pos + 1) }

// take extends batch, a slice of the ring that ends where the consumer
// stopped (or an empty one), with the oldest published rows, to at most max
// rows, and appends to waiters their done channels that are not nil. A
// batch does not wrap: end reports that it reaches the ring's last slot,
// so that the next rows start a batch of their own. The rows stay in their
// slots until release. Only one goroutine may take.
func (q *ring) take(batch []Record, waiters []chan struct{}, max int) (_ []Record, _ []chan struct{}, end bool) {
	pos := q.head.Load()
	i := q.div.mod(pos)
	start := i // not an empty slice's pointer: one with no room points at the array's start
	if len(batch) > 0 {
		if start = q.index(batch); start+uint64(len(batch)) != i {
			return batch, waiters, true // it ends at the ring's last slot: the rows at its first start the next batch
		}
	}
	n := uint64(0)
	limit := min(uint64(max-len(batch)), q.size-i)
	for n < limit && q.seqs[i+n].Load() == pos+n+1 {
		n++
	}
	if n > 0 {
		for j, d := range q.dones[i : i+n] {
			if d != nil {
				waiters = append(waiters, d)
				q.dones[i+uint64(j)] = nil
			}
		}
		q.head.Store(pos + n)
		batch = q.rows[start : i+n : i+n] // no room past its end: a sink's append cannot reach the next rows
	}
	return batch, waiters, i+n == q.size
}

// release gives the slots of batch, a slice that take returned, back to
// the producers. Batches may be released in any order, from any
// goroutine. The rows are not cleared: the next row written in a slot
// overwrites all of it (see push and Async.reserve), and a clear here would
// be one more pass of the writer's core over lines the callers' core
// writes next; a released row keeps its strings and maps alive until then,
// no more memory than a full queue holds.
func (q *ring) release(batch []Record) {
	if len(batch) == 0 {
		return
	}
	i := q.index(batch)
	for k := range uint64(len(batch)) {
		s := &q.seqs[i+k]
		s.Store(s.Load() - 1 + q.size) // published at pos+1: free for the producer of pos+size
	}
}

// index is the slot where batch, a slice of the ring, starts. A slice
// that is not one panics: releasing it would free slots still in use.
func (q *ring) index(batch []Record) uint64 {
	off := uintptr(unsafe.Pointer(unsafe.SliceData(batch))) - uintptr(unsafe.Pointer(unsafe.SliceData(q.rows)))
	i := uint64(off / unsafe.Sizeof(Record{}))
	if off%unsafe.Sizeof(Record{}) != 0 || i+uint64(cap(batch)) > q.size {
		panic("audit: a batch that is not a slice of the writer's ring")
	}
	return i
}

// divisor takes remainders by d with a multiplication where % divides: a
// 64-bit division is a few nanoseconds of a call's time (4 on this
// machine's AMD EPYC, `go test` of a dependent loop), twice a call.
type divisor struct{ d, recip uint64 }

// newDivisor returns the divisor by d > 0.
func newDivisor(d uint64) divisor { return divisor{d, ^uint64(0) / d} }

// mod is x % d. The quotient x·recip/2⁶⁴ is the true one or one less
// (recip is within 1 of 2⁶⁴/d, and x/2⁶⁴ < 1), so one subtraction
// corrects the remainder.
func (v divisor) mod(x uint64) uint64 {
	quo, _ := bits.Mul64(x, v.recip)
	r := x - quo*v.d
	if r >= v.d {
		r -= v.d
	}
	return r
}

// len returns how many rows are queued and not yet taken now.
func (q *ring) len() int {
	h := q.head.Load()
	t := q.tail.Load() &^ closedBit
	if t < h {
		return 0
	}
	return int(t - h)
}
