package audit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDurabilityDiskSpoolKeepsRowsNotBuffers: with DurabilityDisk every
// group commit is spooled, most of a row or a few, as a part of the open
// batch, and the spool holds the batches it has not written yet decoded in
// memory, in arrays with room for a batch. What it holds must stay within
// its cache's bound (counted in rows of room), however many batches wait
// while the store is down: once each spooled group kept a buffer with room
// for BatchSize rows (754 KB at the default 2048), up to the cache's 16,384
// rows (gigabytes). The batches past the bound are read back from disk.
func TestDurabilityDiskSpoolKeepsRowsNotBuffers(t *testing.T) {
	sink := SinkFunc(func(context.Context, []Record) error { return errors.New("the store is down") })
	sp, err := OpenSpool(t.TempDir(), SpoolConfig{FallbackLogger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	sp.cacheMax = 64
	w := NewAsync(sink, AsyncConfig{Durability: DurabilityDisk, Spool: sp, BatchSize: 16, Backoff: time.Hour,
		FallbackLogger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	const calls = 200
	for i := range calls {
		w.Emit(context.Background(), Record{Kind: KindTool, Tool: "t", CallID: string(rune('a' + i%26))})
	}
	sp.mu.Lock()
	held, rows, batches := 0, 0, len(sp.pending)
	for _, e := range sp.pending {
		held += cap(e.recs)
		rows += len(e.recs)
	}
	cached, spooled := sp.cached, sp.rows
	sp.mu.Unlock()
	assert.Equal(t, calls, spooled, "every row is spooled")
	assert.GreaterOrEqual(t, batches, calls/16, "in batches of at most BatchSize rows")
	assert.Equal(t, cached, held, "the cache counts the room it holds")
	assert.LessOrEqual(t, held, 64, "and holds no more than its bound")
	assert.Positive(t, rows, "the first batches are held decoded")
	err = w.Close(context.Background())
	assert.ErrorContains(t, err, "stay in the spool", "the store is down: the rows stay for the next start")
}

// TestDurabilityDiskSegmentIsPreallocated: with DurabilityDisk the segment
// being written is filled with zeros up front, so that a frame's
// fdatasync waits for no journal. A process killed then leaves frames
// followed by zeros: the next open takes the zeros for the segment's end,
// not for damage (no error logged, every row kept). Close gives the
// unused end back.
func TestDurabilityDiskSegmentIsPreallocated(t *testing.T) {
	var logged lockedLog
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	dir := t.TempDir()
	sp, err := OpenSpool(dir, SpoolConfig{SegmentBytes: 1 << 20, FallbackLogger: logger})
	require.NoError(t, err)
	sink := SinkFunc(func(context.Context, []Record) error { return errors.New("the store is down") })
	w := NewAsync(sink, AsyncConfig{Durability: DurabilityDisk, Spool: sp, Backoff: time.Hour, FallbackLogger: logger})
	for i := range 20 {
		w.Emit(context.Background(), Record{Kind: KindTool, Tool: "t", CallID: string(rune('a' + i))})
	}
	segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	data, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	assert.Len(t, data, 1<<20, "the segment has its whole length from the start")
	assert.Equal(t, int64(1<<20), w.Stats().SpoolBytes, "and the spool counts it against MaxBytes")

	// What a SIGKILL leaves on disk now, opened by the next process.
	killed := t.TempDir()
	for _, name := range []string{"id", "seq", filepath.Base(segs[0])} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(killed, name), b, 0o600))
	}
	next, err := OpenSpool(killed, SpoolConfig{FallbackLogger: logger})
	require.NoError(t, err)
	assert.Equal(t, 20, next.Rows(), "every row is read back")
	assert.Less(t, next.Size(), int64(1<<20), "the zeros are cut")
	require.NoError(t, next.Close())

	assert.ErrorContains(t, w.Close(context.Background()), "stay in the spool")
	data, err = os.ReadFile(segs[0])
	require.NoError(t, err)
	assert.Less(t, len(data), 1<<20, "Close gives the unused end back")
	assert.False(t, allZero(data[len(data)-1:]), "the file ends with its last frame")
	assert.NotContains(t, logged.String(), "damaged", "zeros after the frames are no damage")
}

// lockedLog is a log destination safe for the writer's goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
