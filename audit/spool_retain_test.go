package audit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDurabilityDiskSpoolKeepsRowsNotBuffers: with DurabilityDisk every
// batch is spooled, most of a row or a few, and the spool holds the
// batches it has not written yet decoded in memory. It must hold their
// rows, not the dispatcher's buffers: a buffer has room for BatchSize
// rows (754 KB at the default 2048), and while the store was down each
// spooled row of a call kept one, up to the spool's 16,384 cached rows
// (gigabytes). Each buffer was also allocated and cleared anew per batch.
func TestDurabilityDiskSpoolKeepsRowsNotBuffers(t *testing.T) {
	sink := SinkFunc(func(context.Context, []Record) error { return errors.New("the store is down") })
	sp, err := OpenSpool(t.TempDir(), SpoolConfig{FallbackLogger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	w := NewAsync(sink, AsyncConfig{Durability: DurabilityDisk, Spool: sp, Backoff: time.Hour,
		FallbackLogger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	const calls = 50
	for i := range calls {
		w.Emit(context.Background(), Record{Kind: KindTool, Tool: "t", CallID: string(rune('a' + i%26))})
	}
	sp.mu.Lock()
	held, rows := 0, 0
	for _, e := range sp.pending {
		held += cap(e.recs)
		rows += len(e.recs)
	}
	sp.mu.Unlock()
	assert.Equal(t, calls, rows, "the spool holds every row decoded")
	assert.Equal(t, rows, held, "and room for no more: its own arrays, not the dispatcher's buffers")
	err = w.Close(context.Background())
	assert.ErrorContains(t, err, "stay in the spool", "the store is down: the rows stay for the next start")
}
