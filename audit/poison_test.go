package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

// pickySink refuses, for its data, every batch that holds a row of the
// tool "poison", and fails as an outage (not for the data) for its next
// outage writes. It records the size of every batch it was given.
type pickySink struct {
	mu     sync.Mutex
	rows   []audit.Record
	sizes  []int
	outage int
}

func (p *pickySink) WriteBatch(_ context.Context, b []audit.Record) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sizes = append(p.sizes, len(b))
	if p.outage > 0 {
		p.outage--
		return errors.New("connection refused")
	}
	for _, r := range b {
		if r.Tool == "poison" {
			p.outage = 3 // and then the store goes away for a while, mid-split
			return fmt.Errorf("sqlstate 22003: %w", audit.ErrRowRefused)
		}
	}
	p.rows = append(p.rows, b...)
	return nil
}

// keep is a fallback sink that keeps its rows.
type keep struct {
	mu   sync.Mutex
	rows []audit.Record
}

func (k *keep) WriteBatch(_ context.Context, b []audit.Record) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rows = append(k.rows, b...)
	return nil
}

func (k *keep) ids() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, r := range k.rows {
		out = append(out, r.CallID)
	}
	slices.Sort(out)
	return out
}

// TestRefusedRowsAreIsolatedThroughAnOutage: without a spool, a batch with
// 4 rows the store refuses for their data is split until they are found;
// the store goes away three times in the middle of the split, and those
// failures are retried, not split: every other row is written once, and
// only the 4 go to the fallback, each with the store's error in a note.
func TestRefusedRowsAreIsolatedThroughAnOutage(t *testing.T) {
	sink := &pickySink{}
	fb := &keep{}
	w := audit.NewAsync(sink, audit.AsyncConfig{QueueSize: 2048, BatchSize: 1000, FlushInterval: time.Hour, Fallback: fb,
		FallbackLogger: discardLogger(nil), Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	poison := map[int]bool{3: true, 500: true, 501: true, 998: true}
	for i := range 1000 {
		r := audit.Record{Kind: audit.KindTool, CallID: fmt.Sprintf("c%04d", i), Tool: "ok", Outcome: audit.OutcomeOK}
		if poison[i] {
			r.Tool = "poison"
		}
		w.Emit(context.Background(), r)
	}
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	assert.Equal(t, uint64(996), st.Written, "every other row written")
	assert.Equal(t, uint64(4), st.Refused, "4 refused")
	assert.Equal(t, uint64(4), st.Fallback, "only they went to the fallback")
	assert.Zero(t, st.Dropped)
	assert.Equal(t, []string{"c0003", "c0500", "c0501", "c0998"}, fb.ids(), "the refused rows")
	for _, r := range fb.rows {
		assert.Contains(t, noteOf(r, audit.NoteRefused), "sqlstate 22003", "the row carries the store's error")
	}
	seen := map[string]int{}
	for _, r := range sink.rows {
		seen[r.CallID]++
	}
	assert.Len(t, seen, 996, "each other row is in the store")
	for id, n := range seen {
		assert.Equal(t, 1, n, "row %s once", id)
	}
	// The outages came right after refusals, so the split's next part was
	// retried at the same size.
	retriedSameSize := 0
	for i := 1; i < len(sink.sizes); i++ {
		if sink.sizes[i] == sink.sizes[i-1] {
			retriedSameSize++
		}
	}
	assert.NotZero(t, retriedSameSize, "an outage is retried at the same size: %v", sink.sizes)
}

// TestAnOutageIsNeverSplit: a store that fails for anything but the data
// gets the whole batch on every attempt, and the batch goes to the
// fallback whole after the retries; no row is counted as refused.
func TestAnOutageIsNeverSplit(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	sink := audit.SinkFunc(func(_ context.Context, b []audit.Record) error {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, len(b))
		return errors.New("connection refused")
	})
	fb := &keep{}
	w := audit.NewAsync(sink, audit.AsyncConfig{BatchSize: 100, FlushInterval: time.Hour, Fallback: fb, MaxRetries: 2,
		FallbackLogger: discardLogger(nil), Backoff: time.Millisecond, MaxBackoff: time.Millisecond})
	for i := range 100 {
		w.Emit(context.Background(), audit.Record{Kind: audit.KindTool, CallID: fmt.Sprint(i), Outcome: audit.OutcomeOK})
	}
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	assert.Equal(t, []int{100, 100, 100}, sizes, "three attempts at the whole batch")
	assert.Zero(t, st.Refused, "nothing refused")
	assert.Equal(t, uint64(100), st.Fallback, "the batch went to the fallback whole")
}

// TestSpoolKeepsNumbersAsWritten: a row whose _meta holds a number outside
// float64's range, or an integer above 2^53, is replayed from the spool's
// file with those numbers as they were (before, decoding the batch failed
// and the whole spooled batch was dropped).
func TestSpoolKeepsNumbersAsWritten(t *testing.T) {
	dir := t.TempDir()
	sink := newOnceSink()
	sink.down.Store(true)
	w := audit.NewAsync(sink, audit.AsyncConfig{Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	w.Emit(context.Background(), audit.Record{Kind: audit.KindTool, CallID: "c0", Outcome: audit.OutcomeOK,
		ClientMeta: map[string]any{"huge": json.Number("1e999999"), "id": json.Number("9007199254740993")}})
	w.Emit(context.Background(), audit.Record{Kind: audit.KindTool, CallID: "c1", Outcome: audit.OutcomeOK})
	require.Error(t, w.Close(context.Background()), "the rows stay in the spool")

	sink.down.Store(false)
	w = audit.NewAsync(sink, audit.AsyncConfig{Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	assert.Zero(t, st.Dropped, "nothing dropped")
	sink.exactlyOnce(t, 2)
	for _, r := range sink.rows {
		if r.CallID == "c0" {
			b, err := json.Marshal(r.ClientMeta)
			require.NoError(t, err)
			assert.Equal(t, `{"huge":1e999999,"id":9007199254740993}`, string(b), "the numbers as written")
		}
	}
}

// noteOf returns the value of the row's note key.
func noteOf(r audit.Record, key string) string {
	for _, n := range r.Notes {
		if n.Key == key {
			return n.Value
		}
	}
	return ""
}

// With DurabilityDisk every batch is spooled, and the segment being written
// is kept (appended to) until it is full: a batch whose row the store
// refused would stay on disk, and a process killed at any later time
// would replay it and send the refused row to the fallback a second time.
// Once the batch is written the spool stops appending to that segment, and
// the file leaves the disk: what a SIGKILL now leaves in the directory
// (copied here while the writer runs) replays nothing to the fallback.
func TestDurabilityDiskRefusedRowLeavesTheDisk(t *testing.T) {
	dir := t.TempDir()
	sink := &pickySink{}
	fb := &keep{}
	w := audit.NewAsync(sink, audit.AsyncConfig{Durability: audit.DurabilityDisk, Backoff: time.Millisecond,
		Spool: openSpool(t, dir, audit.SpoolConfig{}), Fallback: fb, FallbackLogger: discardLogger(nil)})
	defer w.Close(context.Background())
	for i := range 20 {
		r := row(i)
		if i == 7 {
			r.Tool = "poison"
		}
		w.Emit(context.Background(), r)
	}
	// Bounded wait for the refused row's frame to leave the disk (its
	// call id, c7, no longer in any segment file).
	onDisk := func() bool {
		segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
		require.NoError(t, err)
		for _, p := range segs {
			b, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(b), `"c7"`) {
				return true
			}
		}
		return false
	}
	require.Eventually(t, func() bool { return !onDisk() && w.Stats().Refused == 1 }, 20*time.Second, time.Millisecond,
		"the refused row's batch stays on disk after it was written: a crash would replay it")
	assert.Equal(t, []string{"c7"}, fb.ids())

	// A crash now: the directory as it is, opened by the next process.
	crashed := t.TempDir()
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, n := range names {
		if n.Name() == "lock" || n.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted meanwhile
		}
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(crashed, n.Name()), b, 0o600))
	}
	fb2 := &keep{}
	w2 := audit.NewAsync(sink, audit.AsyncConfig{Durability: audit.DurabilityDisk, Backoff: time.Millisecond,
		Spool: openSpool(t, crashed, audit.SpoolConfig{}), Fallback: fb2, FallbackLogger: discardLogger(nil)})
	require.NoError(t, w2.Close(context.Background()))
	assert.Empty(t, fb2.ids(), "the next start sends no refused row to the fallback again")
}
