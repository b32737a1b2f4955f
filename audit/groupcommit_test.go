package audit_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

// copySpool copies what a process killed now leaves in a spool
// directory (its id, its reserved numbers and its segments) to a new one.
func copySpool(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	names, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, names)
	for _, name := range append(names, filepath.Join(dir, "id"), filepath.Join(dir, "seq")) {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, filepath.Base(name)), b, 0o600))
	}
	return to
}

// TestDurabilityDiskGroupCommitsReachTheStoreInOneWrite: with
// DurabilityDisk each call waits for its own group commit (here one per
// row: the calls come one after the other), and the rows of all those
// group commits reach the store in one write per batch, as with
// DurabilityMemory, not in one transaction per group commit (250 writes
// before).
func TestDurabilityDiskGroupCommitsReachTheStoreInOneWrite(t *testing.T) {
	s := newOnceSink()
	w := audit.NewAsync(s, audit.AsyncConfig{Durability: audit.DurabilityDisk, BatchSize: 100, FlushInterval: time.Hour,
		Spool: openSpool(t, t.TempDir(), audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	for i := range 250 {
		w.Emit(context.Background(), row(i))
	}
	require.NoError(t, w.Close(context.Background()))
	s.exactlyOnce(t, 250)
	assert.Equal(t, int64(3), s.writes.Load(), "batches of BatchSize rows, the last one closed by Close")
	st := w.Stats()
	assert.Equal(t, uint64(250), st.Spooled, "every row went through the spool")
	assert.Equal(t, uint64(250), st.Replayed)
}

// TestDurabilityDiskPartsReplayOnceAfterAKill: a batch spooled in parts
// (one per group commit) and not yet in the store when the process is
// killed is read back by the next process as one batch, and written once.
func TestDurabilityDiskPartsReplayOnceAfterAKill(t *testing.T) {
	dir := t.TempDir()
	s := newOnceSink()
	s.down.Store(true)
	w := audit.NewAsync(s, audit.AsyncConfig{Durability: audit.DurabilityDisk, BatchSize: 100, FlushInterval: time.Hour, Backoff: time.Hour,
		Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	for i := range 150 {
		w.Emit(context.Background(), row(i)) // returns once its row is on disk
	}
	killed := copySpool(t, dir) // 100 rows in a closed batch, 50 in the open one
	assert.ErrorContains(t, w.Close(context.Background()), "stay in the spool")

	s.down.Store(false)
	writes := s.writes.Load()
	sp := openSpool(t, killed, audit.SpoolConfig{})
	assert.Equal(t, 150, sp.Rows(), "every part is read back")
	w2 := audit.NewAsync(s, audit.AsyncConfig{Spool: sp, FallbackLogger: discardLogger(nil)})
	require.NoError(t, w2.Close(context.Background()))
	s.exactlyOnce(t, 150)
	assert.Equal(t, int64(2), s.writes.Load()-writes, "each batch's parts are written together")
}

// TestDurabilityDiskKilledAfterTheStoreTookABatch: killed once the store
// has a batch whose parts are still in the spool's segment (it is deleted
// when full, or at Close), and while the next batch is open, the next
// process replays both: the store's ledger skips the first, whose parts
// come back under the same batch id, and the second is written once.
func TestDurabilityDiskKilledAfterTheStoreTookABatch(t *testing.T) {
	dir := t.TempDir()
	s := newOnceSink()
	w := audit.NewAsync(s, audit.AsyncConfig{Durability: audit.DurabilityDisk, BatchSize: 100, FlushInterval: time.Hour,
		Spool: openSpool(t, dir, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	for i := range 150 {
		w.Emit(context.Background(), row(i))
	}
	// The first batch closed at 100 rows; the writer takes it on its own.
	for deadline := time.Now().Add(time.Minute); s.count() < 100 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, 100, s.count(), "the writer wrote the closed batch")
	killed := copySpool(t, dir)
	require.NoError(t, w.Close(context.Background()))
	s.exactlyOnce(t, 150)

	w2 := audit.NewAsync(s, audit.AsyncConfig{Spool: openSpool(t, killed, audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	require.NoError(t, w2.Close(context.Background()))
	s.exactlyOnce(t, 150)
}

// TestSpoolReadsVersion1Frames: a spool left by a toolmw that wrote
// version 1 frames (a whole batch each, no part index) opens, and its
// rows are replayed, each once.
func TestSpoolReadsVersion1Frames(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "id"), []byte("0123456789abcdef0123456789abcdef\n"), 0o600))
	var seg []byte
	for seq := range 3 {
		recs := []audit.Record{row(2 * seq), row(2*seq + 1)}
		payload, err := json.Marshal(recs)
		require.NoError(t, err)
		frame := make([]byte, 20+len(payload))
		copy(frame, "TMS1")
		binary.LittleEndian.PutUint32(frame[4:], uint32(len(payload)))
		binary.LittleEndian.PutUint64(frame[12:], uint64(seq))
		copy(frame[20:], payload)
		binary.LittleEndian.PutUint32(frame[8:], crc32.Checksum(frame[12:], crc32.MakeTable(crc32.Castagnoli)))
		seg = append(seg, frame...)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0000000000000000.seg"), seg, 0o600))
	sp := openSpool(t, dir, audit.SpoolConfig{})
	assert.Equal(t, 6, sp.Rows())
	s := newOnceSink()
	w := audit.NewAsync(s, audit.AsyncConfig{Spool: sp, FallbackLogger: discardLogger(nil)})
	require.NoError(t, w.Close(context.Background()))
	s.exactlyOnce(t, 6)
	assert.Equal(t, int64(3), s.writes.Load(), "one write per version 1 batch")
}

// TestDurabilityDiskUnencodableRowRefusedAlone: under DurabilityDisk each
// group commit is a part of the spool's open batch; a row the spool's
// encoder refuses (arguments that are not JSON) is refused on its own, to
// the fallback with its call id, and every other row of its group commit
// still reaches the store, once. Before, the group commit's whole part
// failed to encode and all its rows were lost to the spool.
func TestDurabilityDiskUnencodableRowRefusedAlone(t *testing.T) {
	s := newOnceSink()
	fb := &keep{}
	w := audit.NewAsync(s, audit.AsyncConfig{Durability: audit.DurabilityDisk, BatchSize: 100, FlushInterval: time.Hour,
		Spool: openSpool(t, t.TempDir(), audit.SpoolConfig{}), Fallback: fb, FallbackLogger: discardLogger(nil)})
	for i := range 50 {
		r := row(i)
		if i == 17 {
			r.Arguments = json.RawMessage(`{"a":`)
		}
		w.Emit(context.Background(), r)
	}
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, []string{"c17"}, fb.ids(), "the unencodable row, alone, in the fallback")
	st := w.Stats()
	assert.Equal(t, uint64(1), st.Refused, "counted as refused")
	s.mu.Lock()
	got := map[string]int{}
	for _, r := range s.rows {
		got[r.CallID]++
	}
	s.mu.Unlock()
	assert.Len(t, got, 49, "every other row in the store")
	assert.Zero(t, got["c17"], "the refused row is not in the store")
	for id, n := range got {
		assert.Equal(t, 1, n, "row %s written once", id)
	}
}

// TestDurabilityDiskHTTPRowFollowsItsCallsSync: with DurabilityDisk, the
// HTTP row of a request whose tool row waited for the disk does not wait
// for a sync of its own (the call's answer went out before the row is
// emitted): it waits in the queue for the next group commit. A request an
// HTTP layer answered, without a tool row, still waits for its HTTP row's
// sync before its response ends, and that sync takes the queued row along.
func TestDurabilityDiskHTTPRowFollowsItsCallsSync(t *testing.T) {
	s := newOnceSink()
	w := audit.NewAsync(s, audit.AsyncConfig{Durability: audit.DurabilityDisk, BatchSize: 100, FlushInterval: time.Hour,
		Spool: openSpool(t, t.TempDir(), audit.SpoolConfig{}), FallbackLogger: discardLogger(nil)})
	h := audit.HTTP(w)(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/denied" {
			http.Error(rw, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Emit(r.Context(), row(1)) // the tool call's row, on the request's context
		_, _ = rw.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))

	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
	st := w.Stats()
	assert.Equal(t, uint64(1), st.Spooled, "the tool row was synced before the handler went on")
	assert.Equal(t, 1, st.Queued, "the HTTP row did not wait for a sync of its own: it is queued for the next group commit")

	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/denied", nil))
	st = w.Stats()
	assert.Equal(t, uint64(3), st.Spooled, "a request without a tool row waited for its HTTP row's sync, with the queued row in it")
	assert.Zero(t, st.Queued, "nothing waits in the queue")

	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, uint64(3), w.Stats().Written, "the three rows reached the store")
	assert.Zero(t, w.Stats().NotDurable, "none was answered without being durable")
}
