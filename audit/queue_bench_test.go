package audit

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The ring below is the hand-written queue the writer used before v0.2,
// kept here only to compare it with the channel the writer uses now:
// BenchmarkQueue measured no difference worth its code (BENCHMARKS.md).

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

// BenchmarkQueue compares the hand-written ring with a buffered channel and
// a batched consumer, in the same run: GOMAXPROCS producers enqueue rows
// while one consumer takes them out in batches of up to 1,024, as the
// writer does.
func BenchmarkQueue(b *testing.B) {
	r := Record{Time: time.Now(), Kind: KindTool, CallID: "c-1", Tool: "search", Outcome: OutcomeOK}
	b.Run("ring", func(b *testing.B) {
		q := newRing(8192)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]Record, 1024)
			for {
				n := 0
				for n < len(batch) && q.pop(&batch[n]) {
					n++
				}
				clear(batch[:n])
				if n == 0 {
					select {
					case <-stop:
						return
					default:
						time.Sleep(20 * time.Microsecond)
					}
				}
			}
		}()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				for q.push(&r) == 0 {
					time.Sleep(time.Microsecond)
				}
			}
		})
		close(stop)
		wg.Wait()
	})
	b.Run("channel", func(b *testing.B) {
		q := make(chan Record, 8192)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]Record, 0, 1024)
			for first := range q {
				batch = append(batch, first)
			fill:
				for len(batch) < cap(batch) {
					select {
					case x, ok := <-q:
						if !ok {
							break fill
						}
						batch = append(batch, x)
					default:
						break fill
					}
				}
				clear(batch)
				batch = batch[:0]
			}
		}()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q <- r
			}
		})
		close(q)
		wg.Wait()
	})
}

// BenchmarkSpoolAdd is the cost of spooling a batch of 2,048 rows (encode,
// checksum, write; no fsync), per row.
func BenchmarkSpoolAdd(b *testing.B) {
	sp, err := OpenSpool(b.TempDir(), SpoolConfig{MaxBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Close()
	batch := make([]Record, 2048)
	for i := range batch {
		batch[i] = Record{Time: time.Now(), Kind: KindTool, CallID: "0123456789ab-42", Tool: "search", Transport: "streamable-http",
			Outcome: OutcomeError, Code: "internal", Message: "dial tcp 10.0.0.1:5432: connection refused", Duration: time.Millisecond,
			ClientMeta: map[string]any{"traceparent": "00-abc-01"}}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := sp.add(BatchID{Spool: sp.ID(), Seq: uint64(i)}, batch, false); err != nil {
			b.Fatal(err)
		}
		sp.mu.Lock()
		sp.pending[len(sp.pending)-1].recs = nil // keep the cache out of it
		sp.cached = 0
		sp.mu.Unlock()
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkDurability compares the two durabilities with 64 concurrent
// callers and a sink that takes every batch at once: DurabilityMemory
// returns once the row is queued (Block, so that none is dropped),
// DurabilityDisk once it is fsync'd in the spool, the callers queued
// together sharing one fsync. rows/s is calls per second.
func BenchmarkDurability(b *testing.B) {
	for _, d := range []Durability{DurabilityMemory, DurabilityDisk} {
		name := map[Durability]string{DurabilityMemory: "memory", DurabilityDisk: "disk"}[d]
		b.Run(name, func(b *testing.B) {
			sp, err := OpenSpool(b.TempDir(), SpoolConfig{MaxBytes: 1 << 40})
			if err != nil {
				b.Fatal(err)
			}
			w := NewAsync(SinkFunc(func(context.Context, []Record) error { return nil }), AsyncOptions{
				Spool: sp, Durability: d, Policy: Block, BlockTimeout: time.Minute,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			r := Record{Time: time.Now(), Kind: KindTool, CallID: "c-1", Tool: "search", Outcome: OutcomeOK}
			b.SetParallelism(32) // 64 callers on 2 CPUs
			b.ReportAllocs()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					w.Emit(context.Background(), r)
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
			_ = w.Close(context.Background())
		})
	}
}
