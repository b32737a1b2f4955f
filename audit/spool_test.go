package audit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/internal/syncbuf"
)

// onceSink is an in-memory OnceSink: a ledger of batch ids next to the
// rows. down makes writes fail; ambiguous makes a write commit and still
// report a failure (a connection lost during the commit).
type onceSink struct {
	mu        sync.Mutex
	rows      []audit.Record
	ledger    map[audit.BatchID]bool
	down      atomic.Bool
	ambiguous atomic.Int64 // this many writes commit and then fail
	delay     time.Duration
	writes    atomic.Int64
}

func newOnceSink() *onceSink { return &onceSink{ledger: map[audit.BatchID]bool{}} }

func (s *onceSink) WriteBatch(ctx context.Context, b []audit.Record) error {
	return s.WriteBatchOnce(ctx, audit.BatchID{}, b)
}

func (s *onceSink) WriteBatchOnce(ctx context.Context, id audit.BatchID, b []audit.Record) error {
	s.writes.Add(1)
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if s.down.Load() {
		return errors.New("store down")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id != (audit.BatchID{}) && s.ledger[id] {
		return nil
	}
	s.ledger[id] = true
	s.rows = append(s.rows, b...)
	if s.ambiguous.Add(-1) >= 0 {
		return errors.New("connection lost during commit")
	}
	return nil
}

func (s *onceSink) ForgetBatches(_ context.Context, spool string, below uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.ledger {
		if id.Spool == spool && id.Seq < below {
			delete(s.ledger, id)
		}
	}
	return nil
}

func (s *onceSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rows)
}

// exactlyOnce checks that the sink holds rows c0..c(n-1), each once.
func (s *onceSink) exactlyOnce(t *testing.T, n int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]int{}
	for _, r := range s.rows {
		seen[r.CallID]++
	}
	dup := 0
	for _, c := range seen {
		if c > 1 {
			dup++
		}
	}
	assert.Zero(t, dup, "rows written more than once")
	assert.Len(t, seen, n, "every row written")
}

func openSpool(t *testing.T, dir string, cfg audit.SpoolConfig) *audit.Spool {
	t.Helper()
	if cfg.FallbackLogger == nil {
		cfg.FallbackLogger = discardLogger(nil)
	}
	sp, err := audit.OpenSpool(dir, cfg)
	require.NoError(t, err)
	return sp
}

// TestSpoolAbsorbsAnOutage: the store is down while rows arrive; nothing
// goes to the fallback, the rows are spooled and, once the store answers,
// replayed: every row exactly once.
func TestSpoolAbsorbsAnOutage(t *testing.T) {
	s := newOnceSink()
	s.down.Store(true)
	fb := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 64, FlushInterval: time.Millisecond, Backoff: time.Millisecond,
		MaxBackoff: 5 * time.Millisecond, Spool: openSpool(t, t.TempDir(), audit.SpoolConfig{}), Fallback: fb, FallbackLogger: discardLogger(nil)})
	const n = 5000
	for i := 0; i < n; i++ {
		w.Emit(context.Background(), row(i))
	}
	require.Eventually(t, func() bool { return w.Stats().Spooled == n }, 10*time.Second, time.Millisecond, "the rows are spooled")
	assert.Zero(t, s.count(), "the store took nothing while down")
	s.down.Store(false)
	require.Eventually(t, func() bool { return s.count() >= n }, 10*time.Second, time.Millisecond, "replayed")
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	t.Logf("%+v", st)
	s.exactlyOnce(t, n)
	assert.Equal(t, uint64(n), st.Written)
	assert.Equal(t, uint64(n), st.Replayed)
	assert.Zero(t, st.Fallback+st.Dropped)
	assert.Zero(t, fb.count())
	assert.Zero(t, st.SpoolRows)
}

// TestSpoolSlowStoreDoesNotHoldCalls: each write takes 20ms; batches that
// are ready meanwhile go to the spool instead of filling the queue.
func TestSpoolSlowStoreDoesNotHoldCalls(t *testing.T) {
	s := newOnceSink()
	s.delay = 20 * time.Millisecond
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 2048, BatchSize: 64, FlushInterval: time.Millisecond,
		Spool: openSpool(t, t.TempDir(), audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	const n = 5000
	for i := 0; i < n; i++ {
		w.Emit(context.Background(), row(i))
		if i%20 == 0 {
			time.Sleep(time.Millisecond) // calls at up to 20k/s (the race detector slows the spool ten times)
		}
	}
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	t.Logf("%+v", st)
	assert.NotZero(t, st.Spooled, "the slow store made the writer spool")
	assert.Equal(t, uint64(n), st.Written+st.Dropped)
	assert.Zero(t, st.Dropped, "the queue never filled: the writer did not wait for the store")
	s.exactlyOnce(t, int(st.Written))
}

// TestSpoolSurvivesARestart: the store is down for good; Close returns
// within its deadline and leaves the rows in the spool; the next process
// replays them, exactly once, even though some were in the store already
// (a write that committed and reported a failure).
func TestSpoolSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	s := newOnceSink()
	s.ambiguous.Store(3) // three batches commit and report a failure: they are spooled too
	const n = 3000
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 100, FlushInterval: time.Millisecond, Backoff: time.Millisecond,
		Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	for i := 0; i < n; i++ {
		w.Emit(context.Background(), row(i))
		if i == 1500 {
			require.Eventually(t, func() bool { return s.ambiguous.Load() < 0 }, 10*time.Second, time.Millisecond)
			s.down.Store(true)
		}
	}
	start := time.Now()
	err := w.Close(context.Background())
	require.Error(t, err, "Close says rows stay in the spool")
	assert.Contains(t, err.Error(), "stay in the spool")
	assert.Less(t, time.Since(start), 30*time.Second, "Close with the store down returns")
	st := w.Stats()
	require.NotZero(t, st.SpoolRows)
	t.Logf("first run: %+v; %d rows in the store", st, s.count())

	s.down.Store(false)
	w2 := audit.NewAsync(s, audit.AsyncConfig{Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	require.NoError(t, w2.Close(context.Background()), "the second run replays everything")
	s.exactlyOnce(t, n)
	assert.Zero(t, w2.Stats().SpoolRows)
	s.mu.Lock()
	assert.LessOrEqual(t, len(s.ledger), 1, "the ledger forgets what the spool will not send again")
	s.mu.Unlock()
}

// TestCloseWithTheStoreHangingReturnsByTheDeadline: a store that never
// answers; Close(ctx with 100ms) returns about then, the rows in the spool.
func TestCloseWithTheStoreHangingReturnsByTheDeadline(t *testing.T) {
	dir := t.TempDir()
	s := &stallSink{release: make(chan struct{})}
	w := audit.NewAsync(s, audit.AsyncConfig{Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	for i := 0; i < 100; i++ {
		w.Emit(context.Background(), row(i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := w.Close(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "100 rows stay in the spool")
	sp := openSpool(t, dir, audit.SpoolConfig{})
	assert.Equal(t, 100, sp.Rows(), "the next start finds them")
	require.NoError(t, sp.Close())
}

// TestSpoolFullCountsAndLogsDrops: a spool bounded to 64 KB and a store
// that is down: the calls return, the rows that do not fit are counted as
// dropped and logged, none goes to the fallback.
func TestSpoolFullCountsAndLogsDrops(t *testing.T) {
	s := newOnceSink()
	s.down.Store(true)
	var logs syncbuf.Buffer
	fb := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 50, FlushInterval: time.Millisecond, Backoff: time.Hour,
		DropLogInterval: 10 * time.Millisecond, Fallback: fb, FallbackLogger: discardLogger(&logs),
		Spool: openSpool(t, t.TempDir(), audit.SpoolConfig{MaxBytes: 64 << 10})})
	const n = 5000
	for i := 0; i < n; i++ {
		w.Emit(context.Background(), row(i))
	}
	require.Eventually(t, func() bool {
		return w.Stats().Dropped > 0 && strings.Contains(logs.String(), "AUDIT ROWS DROPPED")
	},
		10*time.Second, time.Millisecond, "drops are logged while they happen")
	_ = w.Close(context.Background())
	st := w.Stats()
	t.Logf("%+v", st)
	assert.LessOrEqual(t, st.SpoolBytes, int64(64<<10), "the spool stays within its bound")
	assert.Equal(t, uint64(n), st.Spooled+st.Dropped, "every row spooled or counted as dropped")
	assert.Zero(t, fb.count(), "a full spool is not a failing spool: nothing to the fallback")
}

// TestSpoolTornTailIsCut: garbage after the last good frame (a write cut
// by a crash) is cut off on open; the good batches stay.
func TestSpoolTornTailIsCut(t *testing.T) {
	dir := t.TempDir()
	s := newOnceSink()
	s.down.Store(true)
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 10, FlushInterval: time.Millisecond, Backoff: time.Hour,
		Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	for i := 0; i < 100; i++ {
		w.Emit(context.Background(), row(i))
	}
	_ = w.Close(context.Background())
	segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	f, err := os.OpenFile(segs[len(segs)-1], os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("TMS1\x10\x00\x00\x00garbage, a torn write"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var logs syncbuf.Buffer
	sp := openSpool(t, dir, audit.SpoolConfig{FallbackLogger: discardLogger(&logs)})
	assert.Equal(t, 100, sp.Rows(), "the good batches are kept")
	assert.Contains(t, logs.String(), "spool segment damaged", "the damage is reported")
	s.down.Store(false)
	w2 := audit.NewAsync(s, audit.AsyncConfig{Spool: sp, FallbackLogger: discardLogger(nil)})
	require.NoError(t, w2.Close(context.Background()))
	s.exactlyOnce(t, 100)
}

// A spool that holds frames of another format version (a newer toolmw
// wrote them, and an older one opens the directory) is refused at open,
// and left as it is: they are not taken for a torn write and cut.
func TestSpoolOfAnotherVersionIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := newOnceSink()
	s.down.Store(true)
	w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 10, FlushInterval: time.Millisecond, Backoff: time.Hour,
		Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	for i := 0; i < 20; i++ {
		w.Emit(context.Background(), row(i))
	}
	_ = w.Close(context.Background())
	segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	last := segs[len(segs)-1]
	f, err := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("TMS3\x10\x00\x00\x00a frame of a format to come"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(last)
	require.NoError(t, err)

	_, err = audit.OpenSpool(dir, audit.SpoolConfig{FallbackLogger: discardLogger(nil)})
	require.Error(t, err, "a spool of another format version does not open")
	assert.Contains(t, err.Error(), "format TMS3", "the error names the format found")
	assert.Contains(t, err.Error(), last, "and the file")
	after, err := os.ReadFile(last)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the segment is left as it was")

	// Once the newer frames are gone (the version that wrote them replayed
	// them), the directory opens again with every row of its own.
	require.NoError(t, os.WriteFile(last, before[:len(before)-len("TMS3\x10\x00\x00\x00a frame of a format to come")], 0o600))
	sp := openSpool(t, dir, audit.SpoolConfig{})
	assert.Equal(t, 20, sp.Rows(), "the rows of this version's frames are kept")
	require.NoError(t, sp.Close())
}

// TestDurabilityDiskReturnsOnceTheRowIsOnDisk: with DurabilityDisk, when
// Emit returns the row is in the spool (or the store), even with the store
// down.
func TestDurabilityDiskReturnsOnceTheRowIsOnDisk(t *testing.T) {
	dir := t.TempDir()
	s := newOnceSink()
	s.down.Store(true)
	w := audit.NewAsync(s, audit.AsyncConfig{Durability: audit.DurabilityDisk, Backoff: time.Hour,
		Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				w.Emit(context.Background(), row(g*1000+i))
			}
		}()
	}
	wg.Wait()
	st := w.Stats()
	assert.Equal(t, uint64(400), st.Spooled, "every returned Emit's row is in the spool")
	_ = w.Close(context.Background())
	sp := openSpool(t, dir, audit.SpoolConfig{})
	assert.Equal(t, 400, sp.Rows(), "and on disk")
	require.NoError(t, sp.Close())
	assert.Panics(t, func() { audit.NewAsync(s, audit.AsyncConfig{Durability: audit.DurabilityDisk}) }, "DurabilityDisk without a spool")
}

func TestOpenSpoolErrors(t *testing.T) {
	dir := t.TempDir()
	sp := openSpool(t, dir, audit.SpoolConfig{})
	_, err := audit.OpenSpool(dir, audit.SpoolConfig{})
	require.Error(t, err, "a second process on the same directory")
	assert.Contains(t, err.Error(), "another process uses it")
	require.NoError(t, sp.Close())

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = audit.OpenSpool(filepath.Join(file, "spool"), audit.SpoolConfig{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot create the directory")
	_, err = audit.OpenSpool("", audit.SpoolConfig{})
	require.Error(t, err)
}

// A writer with a spool: while the sink is down the rows wait on local
// disk, and they are written once it answers again.
func ExampleSpool() {
	dir, _ := os.MkdirTemp("", "toolmw-spool")
	defer os.RemoveAll(dir)
	var down atomic.Bool
	down.Store(true)
	var written atomic.Int64
	sink := audit.SinkFunc(func(_ context.Context, b []audit.Record) error {
		if down.Load() {
			return errors.New("connection refused")
		}
		written.Add(int64(len(b)))
		return nil
	})
	spool, err := audit.OpenSpool(filepath.Join(dir, "audit.spool"), audit.SpoolConfig{MaxBytes: 64 << 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	w := audit.NewAsync(sink, audit.AsyncConfig{Spool: spool, FlushInterval: time.Millisecond, Backoff: time.Millisecond,
		FallbackLogger: discardLogger(nil)})
	for i := 0; i < 3; i++ {
		w.Emit(context.Background(), audit.Record{Kind: audit.KindTool, Tool: "search", Outcome: audit.OutcomeOK})
	}
	for w.Stats().Spooled < 3 {
		time.Sleep(time.Millisecond)
	}
	down.Store(false) // the store is back
	_ = w.Close(context.Background())
	st := w.Stats()
	fmt.Println("spooled", st.Spooled, "replayed", st.Replayed, "written", written.Load(), "dropped", st.Dropped)
	// Output: spooled 3 replayed 3 written 3 dropped 0
}

// TestDurabilityDiskHTTPRowIsOnDiskBeforeTheResponseEnds: with
// DurabilityDisk, an HTTP row is fsync'd in the spool before the client
// has the end of the response, as a tool row is before its answer: a
// SIGKILL after the response loses neither. The flush interval is an hour,
// so a row that did not wait would still be in the queue.
func TestDurabilityDiskHTTPRowIsOnDiskBeforeTheResponseEnds(t *testing.T) {
	dir := t.TempDir()
	s := newOnceSink()
	s.down.Store(true) // the row can only be in the spool
	w := audit.NewAsync(s, audit.AsyncConfig{Durability: audit.DurabilityDisk, Backoff: time.Hour, FlushInterval: time.Hour,
		Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	srv := httptest.NewServer(audit.HTTP(w)(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(rw, "ok")
	})))
	defer srv.Close()
	for range 3 {
		resp, err := srv.Client().Get(srv.URL + "/mcp")
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
	}
	st := w.Stats()
	assert.Zero(t, st.Queued, "no HTTP row waits in memory once its response ended: %+v", st)
	assert.Equal(t, uint64(3), st.Spooled, "each answered request's row is in the spool: %+v", st)
	srv.Close()
	_ = w.Close(context.Background())
	sp := openSpool(t, dir, audit.SpoolConfig{})
	assert.Equal(t, 3, sp.Rows(), "and on disk")
	require.NoError(t, sp.Close())
}
