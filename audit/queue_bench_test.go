package audit

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"
)

// BenchmarkQueue compares the writer's ring (ring.go) with a buffered
// channel, in the same run, each with a consumer that takes rows in batches
// of up to 1,024 as the dispatcher does: "parallel" is GOMAXPROCS producers
// that keep the queue busy, "one" is a single producer with the consumer
// parked between batches, which is what a server's calls look like. The
// ring wakes its consumer once per batch, the channel once per row.
func BenchmarkQueue(b *testing.B) {
	r := Record{Time: time.Now(), Kind: KindTool, CallID: "c-1", Tool: "search", Outcome: OutcomeOK}
	const batch = 1024
	ringCase := func(b *testing.B, parallel bool) {
		q := newRing(8192, 2*batch)
		wake := make(chan struct{}, 1)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var waiters []chan struct{}
			for {
				select {
				case <-wake:
				case <-stop:
					return
				}
				for {
					rows, _, _ := q.take(nil, waiters[:0], batch)
					if len(rows) == 0 {
						break
					}
					q.release(rows)
				}
			}
		}()
		signal := func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		push := func() {
			pos := q.push(&r, nil)
			for ; pos == 0; pos = q.push(&r, nil) {
				signal()
				runtime.Gosched()
			}
			if pos%batch == 0 {
				signal()
			}
		}
		b.ReportAllocs()
		if parallel {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					push()
				}
			})
		} else {
			for b.Loop() {
				push()
			}
		}
		close(stop)
		wg.Wait()
	}
	chanCase := func(b *testing.B, parallel bool) {
		q := make(chan Record, 8192)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for range q {
				for n = 1; n < batch; n++ {
					select {
					case _, ok := <-q:
						if !ok {
							return
						}
						continue
					default:
					}
					break
				}
			}
		}()
		b.ReportAllocs()
		if parallel {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					q <- r
				}
			})
		} else {
			for b.Loop() {
				q <- r
			}
		}
		close(q)
		wg.Wait()
	}
	b.Run("ring/parallel", func(b *testing.B) { ringCase(b, true) })
	b.Run("channel/parallel", func(b *testing.B) { chanCase(b, true) })
	b.Run("ring/one", func(b *testing.B) { ringCase(b, false) })
	b.Run("channel/one", func(b *testing.B) { chanCase(b, false) })
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
			w := NewAsync(SinkFunc(func(context.Context, []Record) error { return nil }), AsyncConfig{
				Spool: sp, Durability: d, Policy: Block, BlockTimeout: time.Minute,
				FallbackLogger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
