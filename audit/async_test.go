package audit_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// memSink keeps every row it is given; failN makes the first failN writes
// fail.
type memSink struct {
	mu     sync.Mutex
	rows   []audit.Record
	writes int
	sizes  []int
	failN  int
	always bool
}

func (s *memSink) WriteBatch(_ context.Context, batch []audit.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if s.always || s.writes <= s.failN {
		return errors.New("sink down")
	}
	s.sizes = append(s.sizes, len(batch))
	s.rows = append(s.rows, batch...)
	return nil
}

func (s *memSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rows)
}

func (s *memSink) ids(t *testing.T) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make(map[string]bool, len(s.rows))
	for _, r := range s.rows {
		require.False(t, ids[r.CallID], "duplicate call id %s", r.CallID)
		ids[r.CallID] = true
	}
	return ids
}

// idRange is the set of call ids row(lo) .. row(hi-1) carry.
func idRange(lo, hi int) map[string]bool {
	ids := make(map[string]bool, hi-lo)
	for i := lo; i < hi; i++ {
		ids["c"+strconv.Itoa(i)] = true
	}
	return ids
}

func row(i int) audit.Record {
	return audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: "c" + strconv.Itoa(i), Tool: "t", Outcome: audit.OutcomeOK}
}

func TestAsyncBatchesBySizeAndFlushesOnClose(t *testing.T) {
	s := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 10, FlushInterval: time.Hour, FallbackLogger: discardLogger(nil)})
	for i := 0; i < 95; i++ {
		w.Emit(context.Background(), row(i))
	}
	require.Eventually(t, func() bool { return s.count() == 90 }, time.Minute, time.Millisecond)
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, 95, s.count())
	assert.Equal(t, []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 5}, s.sizes)
	assert.Equal(t, audit.Stats{Written: 95}, w.Stats())
	assert.Equal(t, idRange(0, 95), s.ids(t), "each row written once")
	require.NoError(t, w.Close(context.Background()), "Close is idempotent")
}

func TestAsyncFlushesByInterval(t *testing.T) {
	s := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 1000, FlushInterval: 10 * time.Millisecond, FallbackLogger: discardLogger(nil)})
	defer w.Close(context.Background())
	w.Emit(context.Background(), row(1))
	require.Eventually(t, func() bool { return s.count() == 1 }, time.Minute, time.Millisecond)
}

func TestAsyncSinkFailsThenRecoversLosesNothing(t *testing.T) {
	s := &memSink{failN: 4}
	fb := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 50, FlushInterval: time.Millisecond, Backoff: time.Millisecond,
		MaxRetries: 10, Fallback: fb, FallbackLogger: discardLogger(nil)})
	const n = 1000
	for i := 0; i < n; i++ {
		w.Emit(context.Background(), row(i))
	}
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	assert.Equal(t, n, s.count())
	assert.Equal(t, idRange(0, n), s.ids(t), "each row written once")
	assert.Equal(t, uint64(n), st.Written)
	assert.NotZero(t, st.Retried)
	assert.Zero(t, st.Fallback)
	assert.Zero(t, st.Dropped)
	assert.Zero(t, fb.count())
}

func TestAsyncSinkAlwaysFailsEverythingToFallback(t *testing.T) {
	s := &memSink{always: true}
	fb := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 64, FlushInterval: time.Millisecond, Backoff: time.Microsecond,
		MaxRetries: 2, Fallback: fb, FallbackLogger: discardLogger(nil)})
	const n = 1000
	for i := 0; i < n; i++ {
		w.Emit(context.Background(), row(i))
	}
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	assert.Equal(t, n, fb.count())
	assert.Equal(t, idRange(0, n), fb.ids(t), "each row in the fallback once")
	assert.Equal(t, uint64(n), st.Fallback)
	assert.Equal(t, uint64(2*n), st.Retried, "two retries per row")
	assert.Zero(t, st.Written)
	assert.Zero(t, st.Dropped)
}

func TestAsyncPanickingSinkGoesToFallback(t *testing.T) {
	fb := &memSink{}
	w := audit.NewAsync(audit.SinkFunc(func(context.Context, []audit.Record) error { panic("boom") }),
		audit.AsyncConfig{MaxRetries: -1, Backoff: time.Millisecond, Fallback: fb, FallbackLogger: discardLogger(nil)})
	w.Emit(context.Background(), row(1))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := w.Close(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "retrying forever ends with Close's context")
	assert.Equal(t, idRange(1, 2), fb.ids(t), "the row went to the fallback once")
	assert.Equal(t, uint64(1), w.Stats().Fallback)
}

func TestAsyncFallbackFailsCountsDropped(t *testing.T) {
	w := audit.NewAsync(&memSink{always: true}, audit.AsyncConfig{MaxRetries: 1, Backoff: time.Microsecond,
		Fallback: &memSink{always: true}, FallbackLogger: discardLogger(nil)})
	for i := 0; i < 10; i++ {
		w.Emit(context.Background(), row(i))
	}
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, uint64(10), w.Stats().Dropped)
}

// stallSink blocks every write until release is closed or ctx ends.
type stallSink struct {
	release chan struct{}
	n       atomic.Int64
	mu      sync.Mutex
	callIDs []string
}

func (s *stallSink) WriteBatch(ctx context.Context, batch []audit.Record) error {
	select {
	case <-s.release:
		s.n.Add(int64(len(batch)))
		s.mu.Lock()
		for _, r := range batch {
			s.callIDs = append(s.callIDs, r.CallID)
		}
		s.mu.Unlock()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ids is the set of call ids written, failing the test on a duplicate.
func (s *stallSink) ids(t *testing.T) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make(map[string]bool, len(s.callIDs))
	for _, id := range s.callIDs {
		require.False(t, ids[id], "duplicate call id %s", id)
		ids[id] = true
	}
	return ids
}

func TestAsyncDropNeverWaits(t *testing.T) {
	s := &stallSink{release: make(chan struct{})}
	fb := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 16, BatchSize: 4, Policy: audit.Drop, Fallback: fb, FallbackLogger: discardLogger(nil)})
	const n = 10000
	start := time.Now()
	for i := 0; i < n; i++ {
		w.Emit(context.Background(), row(i))
	}
	assert.Less(t, time.Since(start), 2*time.Second, "Emit waited under Drop")
	st := w.Stats()
	assert.GreaterOrEqual(t, st.Dropped, uint64(n-16-2*4), "at most the queue, the batch being handed over and the one being written are held")
	close(s.release)
	require.NoError(t, w.Close(context.Background()))
	st = w.Stats()
	assert.Equal(t, uint64(n), st.Written+st.Dropped+st.Fallback, "every row is accounted for")
	assert.Equal(t, int64(st.Written), s.n.Load())
	written, fallen := s.ids(t), fb.ids(t)
	assert.Len(t, written, int(st.Written), "Written counts distinct rows")
	assert.Len(t, fallen, int(st.Fallback), "Fallback counts distinct rows")
	all := idRange(0, n)
	for id := range written {
		assert.True(t, all[id], "written %s was emitted", id)
		assert.False(t, fallen[id], "%s both written and in the fallback", id)
	}
	for id := range fallen {
		assert.True(t, all[id], "fallback %s was emitted", id)
	}

	w.Emit(context.Background(), row(-1))
	assert.Equal(t, st.Dropped+1, w.Stats().Dropped, "under Drop a row after Close is counted as dropped")
}

func TestAsyncBlockWaitsAndLosesNothing(t *testing.T) {
	s := &stallSink{release: make(chan struct{})}
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 8, BatchSize: 4, Policy: audit.Block, BlockTimeout: time.Minute, FallbackLogger: discardLogger(nil)})
	var wg sync.WaitGroup
	const n = 200
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/4; i++ {
				w.Emit(context.Background(), row(g*n/4+i))
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	assert.LessOrEqual(t, w.Stats().Queued, 8, "the queue is bounded")
	close(s.release)
	wg.Wait()
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, audit.Stats{Written: n}, w.Stats())
	assert.Equal(t, idRange(0, n), s.ids(t), "each row written once")
}

func TestAsyncCloseDeadlineSendsRestToFallback(t *testing.T) {
	s := &stallSink{release: make(chan struct{})} // never released
	fb := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 100, BatchSize: 10, Policy: audit.Block, Fallback: fb, FallbackLogger: discardLogger(nil)})
	for i := 0; i < 50; i++ {
		w.Emit(context.Background(), row(i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, w.Close(ctx), context.DeadlineExceeded)
	assert.Equal(t, idRange(0, 50), fb.ids(t), "each row in the fallback once")
	assert.Equal(t, uint64(50), w.Stats().Fallback)

	w.Emit(context.Background(), row(99))
	want := idRange(0, 50)
	want["c99"] = true
	assert.Equal(t, want, fb.ids(t), "under Block a row after Close goes to the fallback")
}

func TestAsyncConcurrentEmitAndClose(t *testing.T) {
	for round := 0; round < 20; round++ {
		s := &memSink{}
		fb := &memSink{}
		w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 64, BatchSize: 16, Fallback: fb, FallbackLogger: discardLogger(nil)})
		var wg sync.WaitGroup
		var emitted atomic.Int64
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					w.Emit(context.Background(), row(g*200+i))
					emitted.Add(1)
				}
			}()
		}
		time.Sleep(time.Duration(round) * 100 * time.Microsecond)
		require.NoError(t, w.Close(context.Background()))
		wg.Wait()
		st := w.Stats()
		assert.Equal(t, int(emitted.Load()), s.count()+fb.count()+int(st.Dropped), "round %d", round)
		assert.Zero(t, fb.count(), "round %d: the sink was healthy", round)
		// Every row written is an emitted one, once: a duplicate and a loss
		// would cancel out in the count above.
		got := s.ids(t)
		all := idRange(0, 8*200)
		for id := range got {
			assert.True(t, all[id], "round %d: written %s was emitted", round, id)
		}
		assert.Len(t, got, int(emitted.Load())-int(st.Dropped), "round %d: every row not dropped, once", round)
	}
}

// TestAsyncConcurrentInPlaceRowsAndClose is TestAsyncConcurrentEmitAndClose
// for the rows the interceptor builds in their slot of the queue (no
// _meta, no detail), which count no call in flight: calls racing Close get
// their row written, or under Block given to the fallback once the writer
// is closed, and under Drop written or counted as dropped; none is lost in
// a slot the dispatcher left behind, and Close returns.
func TestAsyncConcurrentInPlaceRowsAndClose(t *testing.T) {
	for _, policy := range []audit.FullPolicy{audit.Block, audit.Drop} {
		for round := 0; round < 20; round++ {
			s, fb := &memSink{}, &memSink{}
			w := audit.NewAsync(s, audit.AsyncConfig{Policy: policy, QueueSize: 64, BatchSize: 16, Fallback: fb, FallbackLogger: discardLogger(nil)})
			h, err := middleware.New(audit.Interceptor(w)).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ok"}}}
			})
			require.NoError(t, err)
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 200; i++ {
						h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: fmt.Sprintf("c%d", g*200+i)})
					}
				}()
			}
			time.Sleep(time.Duration(round) * 100 * time.Microsecond)
			require.NoError(t, w.Close(context.Background()), "policy %d, round %d", policy, round)
			wg.Wait()
			st := w.Stats()
			written, late := s.ids(t), fb.ids(t)
			assert.Equal(t, 8*200, len(written)+len(late)+int(st.Dropped), "policy %d, round %d: every call's row is written, given to the fallback or counted as dropped, once: %+v", policy, round, st)
			for id := range late {
				assert.False(t, written[id], "policy %d, round %d: %s both written and given to the fallback", policy, round, id)
			}
			if policy == audit.Block {
				assert.Zero(t, st.Dropped, "policy %d, round %d: Block drops nothing", policy, round)
			}
		}
	}
}

// TestAsyncMemoryBoundedWhenSinkStalls emits a million rows into a writer
// whose sink never returns: the heap stays within the queue's size.
func TestAsyncMemoryBoundedWhenSinkStalls(t *testing.T) {
	s := &stallSink{release: make(chan struct{})}
	const queue = 4096
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: queue, BatchSize: 256, Policy: audit.Drop, FallbackLogger: discardLogger(nil)})
	r := row(1)
	for i := 0; i < queue*2; i++ { // fill the queue first
		w.Emit(context.Background(), r)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 1_000_000; i++ {
		w.Emit(context.Background(), r)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap growth after 1e6 rows into a stalled sink: %d bytes; dropped %d", growth, w.Stats().Dropped)
	assert.Less(t, growth, int64(1<<20))
	close(s.release)
	require.NoError(t, w.Close(context.Background()))
}

func ExampleAsync_Stats() {
	w := audit.NewAsync(audit.SinkFunc(func(context.Context, []audit.Record) error { return nil }),
		audit.AsyncConfig{FallbackLogger: discardLogger(nil)})
	w.Emit(context.Background(), audit.Record{Kind: audit.KindTool, Tool: "search", Outcome: audit.OutcomeOK})
	_ = w.Close(context.Background())
	st := w.Stats()
	fmt.Println(st.Written, st.Retried, st.Fallback, st.Dropped)
	// Output: 1 0 0 0
}

// A sink that calls runtime.Goexit on the writer's goroutine (what
// t.FailNow does in a test double) does not end the writer: the write
// counts as failed and is retried, the Goexit is reported once, and every
// row is written and Close returns. A fallback sink that does the same
// does not end the writer either.
func TestAsyncSinkGoexitDoesNotEndTheWriter(t *testing.T) {
	var calls atomic.Int32
	s := &memSink{}
	sink := audit.SinkFunc(func(ctx context.Context, b []audit.Record) error {
		if calls.Add(1) <= 3 {
			runtime.Goexit()
		}
		return s.WriteBatch(ctx, b)
	})
	var logged syncbuf.Buffer
	fb := audit.SinkFunc(func(context.Context, []audit.Record) error { runtime.Goexit(); return nil })
	w := audit.NewAsync(sink, audit.AsyncConfig{BatchSize: 10, FlushInterval: time.Hour, Backoff: time.Millisecond,
		MaxRetries: 2, Fallback: fb, FallbackLogger: discardLogger(&logged)})
	const n = 100
	for i := range n {
		w.Emit(context.Background(), row(i))
	}
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	// The first batch: two Goexits and a third one on its last retry, then
	// the fallback ends in a Goexit too: its 10 rows are dropped, counted.
	assert.Equal(t, uint64(n-10), st.Written, "%+v", st)
	assert.Equal(t, uint64(10), st.Dropped, "%+v", st)
	assert.Equal(t, idRange(10, n), s.ids(t), "the writer went on writing every later batch")
	assert.Equal(t, 1, strings.Count(logged.String(), "runtime.Goexit; the write counts as failed"), "reported once: %s", logged.String())
}
