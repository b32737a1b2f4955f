package audit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/internal/syncbuf"
)

// faultStore is a store whose writes fail while down is set; it keeps the
// rows it took, by call id.
type faultStore struct {
	mu   sync.Mutex
	rows map[string]int
	down atomic.Bool
}

func (s *faultStore) WriteBatch(_ context.Context, b []Record) error {
	if s.down.Load() {
		return errors.New("the store is down")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rows == nil {
		s.rows = map[string]int{}
	}
	for _, r := range b {
		s.rows[r.CallID]++
	}
	return nil
}

func (s *faultStore) has(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows[id]
}

// breakAppends makes the spool's appends fail from now on, as an I/O error
// of its disk would (its segment is swapped for a read-only handle of the
// same file), and returns what mends it.
func breakAppends(t *testing.T, sp *Spool) (mend func()) {
	t.Helper()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	require.NotNil(t, sp.cur, "a segment is being written")
	ro, err := os.Open(sp.cur.Name())
	require.NoError(t, err)
	good := sp.cur
	sp.cur = ro
	return func() {
		sp.mu.Lock()
		defer sp.mu.Unlock()
		sp.cur = good
		_ = ro.Close()
	}
}

// spooled reports whether the spool holds a row with call id (in memory:
// the spool's copy of what it made durable).
func spooled(sp *Spool, id string) bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for _, e := range sp.pending {
		for _, r := range e.recs {
			if r.CallID == id {
				return true
			}
		}
	}
	return false
}

// TestDurabilityDiskSpoolFailureWritesTheStoreBeforeEmitReturns: with
// DurabilityDisk, a group commit the spool cannot append (an I/O error)
// is written to the store before its calls' Emit return, so the promise
// holds: no Emit returns with its row neither fsync'd in the spool nor in
// the store. Before, the rows went to the fallback log and Emit returned
// as if they were durable: a call answered with its row nowhere a restart
// would find it.
func TestDurabilityDiskSpoolFailureWritesTheStoreBeforeEmitReturns(t *testing.T) {
	store := &faultStore{}
	store.down.Store(true) // the first row waits in the spool
	var fellBack atomic.Int64
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	sp, err := OpenSpool(t.TempDir(), SpoolConfig{FallbackLogger: logger})
	require.NoError(t, err)
	w := NewAsync(store, AsyncConfig{Durability: DurabilityDisk, Spool: sp, FlushInterval: time.Hour, Backoff: time.Hour,
		FallbackLogger: logger,
		Fallback:       SinkFunc(func(_ context.Context, b []Record) error { fellBack.Add(int64(len(b))); return nil })})

	w.Emit(context.Background(), Record{Kind: KindTool, CallID: "spooled"})
	require.True(t, spooled(sp, "spooled"), "the first row is in the spool when Emit returns")

	mend := breakAppends(t, sp)
	store.down.Store(false)
	w.Emit(context.Background(), Record{Kind: KindTool, CallID: "stored"})
	assert.Equal(t, 1, store.has("stored"), "the spool failed: the row is in the store when Emit returns")
	assert.Zero(t, fellBack.Load(), "nothing went to the fallback")

	// Neither can take it: Emit returns, and says the row is not durable.
	store.down.Store(true)
	w.Emit(context.Background(), Record{Kind: KindTool, CallID: "lost"})
	assert.Zero(t, store.has("lost"))
	assert.Equal(t, int64(1), fellBack.Load(), "the row went to the fallback")
	st := w.Stats()
	assert.Equal(t, uint64(1), st.NotDurable, "counted: answered without its row durable")
	assert.Equal(t, uint64(1), st.Fallback)

	mend()
	store.down.Store(false)
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, 1, store.has("spooled"), "the spooled row is written once")
	assert.Equal(t, 1, store.has("stored"), "the row written directly is written once")
	st = w.Stats()
	assert.Equal(t, uint64(2), st.Written)
	assert.Equal(t, uint64(1), st.NotDurable)
}

// TestDurabilityDiskLateRowIsCountedNotDurable: with DurabilityDisk a row
// emitted after Close (under Drop: dropped) returns at once, and counts as
// not durable as well as dropped.
func TestDurabilityDiskLateRowIsCountedNotDurable(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	sp, err := OpenSpool(t.TempDir(), SpoolConfig{FallbackLogger: logger})
	require.NoError(t, err)
	w := NewAsync(&faultStore{}, AsyncConfig{Durability: DurabilityDisk, Spool: sp, FallbackLogger: logger})
	require.NoError(t, w.Close(context.Background()))
	w.Emit(context.Background(), Record{Kind: KindTool, CallID: "late"}) // after Close: dropped under Drop
	st := w.Stats()
	assert.Equal(t, uint64(1), st.Dropped)
	assert.Equal(t, uint64(1), st.NotDurable)
}

// flakyOnceStore is an in-memory OnceSink with a ledger that goes down and
// up, and whose writes may commit and still report a failure (a connection
// lost during the commit), as PostgreSQL stopped and started under it.
type flakyOnceStore struct {
	mu        sync.Mutex
	rows      map[string]int
	ledger    map[BatchID]bool
	down      atomic.Bool
	ambiguous atomic.Int64
}

func (s *flakyOnceStore) WriteBatch(ctx context.Context, b []Record) error {
	return s.WriteBatchOnce(ctx, BatchID{}, b)
}

func (s *flakyOnceStore) WriteBatchOnce(_ context.Context, id BatchID, b []Record) error {
	if s.down.Load() {
		return errors.New("the store is down")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id != (BatchID{}) && s.ledger[id] {
		return nil
	}
	s.ledger[id] = true
	for _, r := range b {
		s.rows[r.CallID]++
	}
	if s.ambiguous.Add(-1) >= 0 {
		return errors.New("connection lost during the commit")
	}
	return nil
}

func (s *flakyOnceStore) ForgetBatches(_ context.Context, spool string, below uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.ledger {
		if id.Spool == spool && id.Seq < below {
			delete(s.ledger, id)
		}
	}
	return nil
}

// TestDurabilityDiskOutagesThenKillKeepEveryAnsweredRow: 16 callers emit
// with DurabilityDisk while the store goes down and up and some of its
// commits are reported failed; the process is then "killed" (its spool
// copied while no store write is under way) and a new one drains the
// copy into the same store: every row whose Emit had returned is there,
// once. The writer's retries and splits during an outage lose nothing.
func TestDurabilityDiskOutagesThenKillKeepEveryAnsweredRow(t *testing.T) {
	store := &flakyOnceStore{rows: map[string]int{}, ledger: map[BatchID]bool{}}
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))
	dir := t.TempDir()
	sp, err := OpenSpool(dir, SpoolConfig{FallbackLogger: logger})
	require.NoError(t, err)
	w := NewAsync(store, AsyncConfig{Durability: DurabilityDisk, Spool: sp, BatchSize: 64, FlushInterval: 2 * time.Millisecond,
		Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, FallbackLogger: logger})
	const callers, calls = 16, 150
	var wg sync.WaitGroup
	var answered sync.Map
	stop := make(chan struct{})
	flapped := make(chan struct{})
	go func() { // the store's outages, driven by the calls' progress
		defer close(flapped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			store.down.Store(i%3 == 0)
			if i%5 == 0 {
				store.ambiguous.Store(1)
			}
			time.Sleep(time.Millisecond) // pacing only: the assertion holds at any interleaving
		}
	}()
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				id := string(rune('A'+c)) + "-" + time.Duration(i).String()
				w.Emit(context.Background(), Record{Kind: KindTool, CallID: id})
				answered.Store(id, true)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-flapped
	// The kill: no store write under way, the spool as it is on disk.
	w.sinkMu.Lock()
	store.down.Store(true)
	killed := t.TempDir()
	for _, name := range []string{"id", "seq"} {
		b, err := os.ReadFile(dir + "/" + name)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(killed+"/"+name, b, 0o600))
	}
	segs, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range segs {
		if len(e.Name()) > 4 && e.Name()[len(e.Name())-4:] == ".seg" {
			b, err := os.ReadFile(dir + "/" + e.Name())
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(killed+"/"+e.Name(), b, 0o600))
		}
	}
	w.sinkMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_ = w.Close(ctx) // the killed process's writer ends; it writes nothing more (the store is down)
	cancel()

	store.down.Store(false)
	store.ambiguous.Store(0)
	sp2, err := OpenSpool(killed, SpoolConfig{FallbackLogger: logger})
	require.NoError(t, err)
	w2 := NewAsync(store, AsyncConfig{Durability: DurabilityDisk, Spool: sp2, FallbackLogger: logger})
	require.NoError(t, w2.Close(context.Background()))

	store.mu.Lock()
	defer store.mu.Unlock()
	missing, twice := 0, 0
	answered.Range(func(k, _ any) bool {
		switch store.rows[k.(string)] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
		return true
	})
	assert.Zero(t, missing, "every answered row is in the store")
	assert.Zero(t, twice, "each once")
	assert.Zero(t, w.Stats().NotDurable)
	if t.Failed() {
		t.Logf("stats %+v then %+v; logs:\n%s", w.Stats(), w2.Stats(), logs.String())
	}
}
