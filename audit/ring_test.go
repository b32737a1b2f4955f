package audit

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushN pushes rows named from..to-1 and returns how many the ring took.
func pushN(q *ring, from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		r := Record{CallID: strconv.Itoa(i)}
		if q.push(&r, nil) == 0 {
			break
		}
		n++
	}
	return n
}

func ids(rows []Record) []string {
	out := make([]string, len(rows))
	for i := range rows {
		out[i] = rows[i].CallID
	}
	return out
}

// TestRingBatchesHeldLeaveTheQueueItsRoom: batches taken and not released
// (the one being written, the one handed over) hold their slots, in the
// room the ring has for them on top of the queue, so the calls still find
// queue rows of room, as when batches were buffers of their own; and the
// queue never holds more than queue rows not yet taken.
func TestRingBatchesHeldLeaveTheQueueItsRoom(t *testing.T) {
	q := newRing(4, 2*2)
	require.Equal(t, 4, pushN(q, 0, 10), "the queue takes queue rows")
	assert.Equal(t, 4, q.len())
	b1, _, _ := q.take(nil, nil, 2)
	b2, _, _ := q.take(nil, nil, 2)
	assert.Equal(t, []string{"0", "1"}, ids(b1))
	assert.Equal(t, []string{"2", "3"}, ids(b2))
	assert.Equal(t, 0, q.len())
	require.Equal(t, 4, pushN(q, 4, 10), "with two batches held, the queue has its room again")
	assert.Zero(t, pushN(q, 8, 10), "and no more")

	// The second batch is released first (spooled while the first is
	// written): its slots come back, but the ring hands slots out in
	// order, so the first batch's, next in line, still holds the calls.
	q.release(b2)
	b3, _, _ := q.take(nil, nil, 2)
	assert.Equal(t, []string{"4", "5"}, ids(b3))
	assert.Zero(t, pushN(q, 8, 10), "the next slot is still the first batch's")
	q.release(b1)
	require.Equal(t, 2, pushN(q, 8, 10), "released, its slots take rows")
	rest, _, _ := q.take(nil, nil, 8)
	assert.Equal(t, []string{"6", "7"}, ids(rest), "a batch stops at the ring's end")
	q.release(b3)
	q.release(rest)
	again, _, _ := q.take(nil, nil, 8)
	assert.Equal(t, []string{"8", "9"}, ids(again), "the rows pushed into the freed slots, in order")
}

// TestRingBatchDoesNotWrap: a batch is one run of slots; one that reaches
// the ring's last slot says so, is not extended past it, and the rows at
// the ring's first slot start the next batch.
func TestRingBatchDoesNotWrap(t *testing.T) {
	q := newRing(3, 2)
	require.Equal(t, 3, pushN(q, 0, 3))
	b, _, end := q.take(nil, nil, 3)
	require.False(t, end)
	q.release(b)
	require.Equal(t, 3, pushN(q, 3, 6)) // slots 3, 4, 0
	b, _, end = q.take(nil, nil, 3)
	assert.Equal(t, []string{"3", "4"}, ids(b))
	assert.True(t, end, "the batch reaches the last slot")
	b2, _, end := q.take(b, nil, 3)
	assert.Equal(t, ids(b), ids(b2), "a batch at the end is not extended")
	assert.True(t, end)
	next, _, _ := q.take(nil, nil, 3)
	assert.Equal(t, []string{"5"}, ids(next), "the row at the first slot starts the next batch")
	q.release(b)
	q.release(next)
}

// TestRingBatchIsCapped: a batch has no room past its end, so a sink that
// appends to the slice it was given gets a new array instead of writing
// over the rows queued after it.
func TestRingBatchIsCapped(t *testing.T) {
	q := newRing(4, 0)
	require.Equal(t, 4, pushN(q, 0, 4))
	b, _, _ := q.take(nil, nil, 2)
	assert.Equal(t, len(b), cap(b))
	_ = append(b, Record{CallID: "sink's own"})
	rest, _, _ := q.take(nil, nil, 2)
	assert.Equal(t, []string{"2", "3"}, ids(rest), "the next rows are untouched")
	assert.Panics(t, func() { q.release(make([]Record, 1)) }, "a slice that is not the ring's frees nothing")
}

// TestRingWaitersAreTaken: the done channels of the rows in a batch are
// handed over with it and cleared from their slots.
func TestRingWaitersAreTaken(t *testing.T) {
	q := newRing(2, 0)
	d := make(chan struct{}, 1)
	r := Record{CallID: "a"}
	require.NotZero(t, q.push(&r, d))
	require.NotZero(t, q.push(&r, nil))
	b, waiters, _ := q.take(nil, nil, 2)
	assert.Len(t, b, 2)
	assert.Equal(t, []chan struct{}{d}, waiters)
	assert.Nil(t, q.dones[0])
}

// TestDivisorIsTheRemainder: divisor.mod, a multiplication, is x % d for
// every size the ring or a batch may have, x near 0, around each multiple
// and near 2⁶⁴ included.
func TestDivisorIsTheRemainder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, size := range []uint64{1, 2, 3, 5, 7, 8, 12288, 67584, 1<<16 + 1, 1 << 20, 1<<31 - 1, 1<<32 + 3} {
		v := newDivisor(size)
		check := func(x uint64) {
			if got := v.mod(x); got != x%size {
				t.Fatalf("d %d x %d: mod %d, want %d", size, x, got, x%size)
			}
		}
		for pos := range min(3*size, 100000) {
			check(pos)
		}
		for k := range uint64(1000) {
			check(k*size - 1)
			check(k * size)
			check(^uint64(0) - k)
			check(rnd.Uint64())
		}
	}
}

// TestRingStaleTailIsNotFull: a producer that read tail, and was then
// preempted while others pushed and the consumer took their rows, finds
// head ahead of the tail it read. The queue is not full: it reserves the
// next free position. Before, pos - head wrapped around as an unsigned
// number and the row was refused as if the queue were full: counted as
// dropped, and with DurabilityDisk its call answered with no row at all
// (CI lost one answered call's tool row so, under SIGKILL test load).
func TestRingStaleTailIsNotFull(t *testing.T) {
	q := newRing(8, 4)
	stale := q.tail.Load() // what the preempted producer read
	require.Equal(t, 3, pushN(q, 0, 3), "others push")
	batch, _, _ := q.take(nil, nil, 8) // and the consumer takes their rows
	require.Len(t, batch, 3)
	i, pos, ok := q.reserveFrom(stale, false)
	require.True(t, ok, "the queue is empty: not full")
	assert.Equal(t, uint64(3), pos, "the next free position")
	q.rows[i] = Record{CallID: "late"}
	q.publish(i, pos)
	q.release(batch)
	next, _, _ := q.take(nil, nil, 8)
	assert.Equal(t, []string{"late"}, ids(next))
}

// TestRingCloseRefusesReserveNotPush: after close, reserve (the in-place
// path, which counts no call in flight) refuses every slot, including for
// a producer that read tail before close and reserves after it; push (the
// copy path, whose callers the dispatcher waits for) still takes them; and
// len counts the rows, not the closed bit. Async.Close relies on the three.
func TestRingCloseRefusesReserveNotPush(t *testing.T) {
	q := newRing(8, 4)
	require.Equal(t, 2, pushN(q, 0, 2))
	i, pos, ok := q.reserve()
	require.True(t, ok, "open: reserve takes a slot")
	stale := q.tail.Load() // a producer read tail, then was preempted
	q.close()
	_, _, ok = q.reserve()
	assert.False(t, ok, "closed: reserve refuses")
	_, _, ok = q.reserveFrom(stale, false)
	assert.False(t, ok, "closed: a reservation from a tail read before close refuses too")
	assert.Equal(t, 3, q.len(), "len counts the rows reserved before close, not the closed bit")
	q.rows[i] = Record{CallID: "in-place"}
	q.publish(i, pos) // the slot reserved before close is still published
	r := Record{CallID: "copied"}
	assert.Equal(t, uint64(4), q.push(&r, nil), "closed: push still takes the next slot")
	batch, _, _ := q.take(nil, nil, 8)
	got := make([]string, len(batch))
	for k := range batch {
		got[k] = batch[k].CallID
	}
	assert.Equal(t, []string{"0", "1", "in-place", "copied"}, got, "every row queued before and after close is taken, in order")
	assert.Zero(t, q.len(), "nothing left once taken")
}
