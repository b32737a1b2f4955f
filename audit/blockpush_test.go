package audit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

// TestAsyncBlockWakesEveryWaiter: many calls blocked on a tiny queue under
// Block, with a timeout of an hour, all get in as the writer drains it.
// Blocked calls sleep until the dispatcher takes rows and wake one another
// in turn; a call that missed its wake-up would wait for the hour, and
// the test fails it after two minutes instead.
func TestAsyncBlockWakesEveryWaiter(t *testing.T) {
	s := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 4, BatchSize: 2, Policy: audit.Block, BlockTimeout: time.Hour, FallbackLogger: discardLogger(nil)})
	const producers, each = 8, 250
	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for i := range each {
				w.Emit(context.Background(), row(g*each+i))
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("a blocked Emit was not woken when the queue had room")
	}
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, audit.Stats{Written: producers * each}, w.Stats(), "every row written, none dropped")
	assert.Equal(t, idRange(0, producers*each), s.ids(t), "each row once")
}

// TestAsyncBlockTimeoutDropsWhenTheSinkStalls: with the sink stalled and
// the queue full, a call under Block returns after BlockTimeout and its
// row is counted as dropped; every row is accounted for.
func TestAsyncBlockTimeoutDropsWhenTheSinkStalls(t *testing.T) {
	s := &stallSink{release: make(chan struct{})} // never released
	fb := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 2, BatchSize: 1, Policy: audit.Block, BlockTimeout: 5 * time.Millisecond,
		Fallback: fb, FallbackLogger: discardLogger(nil)})
	const n = 12 // more than the queue, the dispatcher's batch and the writer's hold
	for i := range n {
		w.Emit(context.Background(), row(i))
	}
	st := w.Stats()
	assert.Positive(t, st.Dropped, "rows that found no room within BlockTimeout are dropped: %+v", st)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, w.Close(ctx), context.DeadlineExceeded)
	st = w.Stats()
	assert.Equal(t, uint64(n), st.Dropped+st.Fallback+st.Written, "each row dropped, in the fallback or written: %+v", st)
}
