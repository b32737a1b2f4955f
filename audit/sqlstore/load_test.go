package sqlstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

const (
	loadGoroutines = 64
	loadCalls      = 2000
)

// mixedHandler succeeds, fails publicly, fails raw, panics or sees a
// cancelled call, by the call's number.
func mixedHandler(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	switch req.Tool {
	case "ok":
		return toolctx.TextResult("fine")
	case "public":
		return toolctx.ErrorResult(errs.NotFound("no such thing"))
	case "raw":
		return toolctx.ErrorResult(errors.New("dial tcp 10.0.0.1:5432: connection refused"))
	case "panic":
		panic("index out of range")
	default: // "cancel"
		<-ctx.Done()
		return toolctx.ErrorResult(ctx.Err())
	}
}

var loadTools = [...]string{"ok", "public", "raw", "panic", "cancel"}

// runLoad sends goroutines x calls through the full chain into w, then
// closes w, and returns how many calls of each tool were made.
func runLoad(t testing.TB, w *audit.Async, goroutines, calls int) map[string]int64 {
	h, err := middleware.New(
		audit.Interceptor(w),
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	).ThenFunc(mixedHandler)
	require.NoError(t, err)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	var counts [len(loadTools)]atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				k := (g + i) % len(loadTools)
				ctx := context.Background()
				if loadTools[k] == "cancel" {
					ctx = canceled
				}
				req := &toolctx.Request{Tool: loadTools[k], CallID: adapter.NewCallID(), Transport: toolctx.TransportInMemory}
				h.CallTool(ctx, req)
				counts[k].Add(1)
			}
		}()
	}
	wg.Wait()
	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer ccancel()
	require.NoError(t, w.Close(cctx))
	out := map[string]int64{}
	for k, name := range loadTools {
		out[name] = counts[k].Load()
	}
	return out
}

// TestConcurrentCallsLoseNothing: 64 goroutines x 2,000 mixed calls through
// the full chain and the async writer into each database; after Close the
// row count equals the call count and every call id is unique.
//
// Under the race detector the SQLite run makes 64 x 250 calls: the detector
// instruments modernc.org/sqlite's transpiled C, and 128,000 rows take over
// a minute on a 2-CPU machine. PostgreSQL keeps 64 x 2,000 under -race.
func TestConcurrentCallsLoseNothing(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			calls := loadCalls
			if raceEnabled && b.name == "sqlite" {
				calls = 250
			}
			s, raw := b.open(t)
			fb := &countSink{}
			w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 16384, BatchSize: 1000, FlushInterval: 20 * time.Millisecond,
				Policy: audit.Block, BlockTimeout: time.Minute, Fallback: fb, FallbackLogger: quiet()})
			start := time.Now()
			counts := runLoad(t, w, loadGoroutines, calls)
			t.Logf("%s: %d calls in %v; %+v", b.name, loadGoroutines*calls, time.Since(start), w.Stats())
			total := int64(loadGoroutines * calls)
			st := w.Stats()
			assert.Equal(t, uint64(total), st.Written)
			assert.Zero(t, st.Dropped)
			assert.Zero(t, st.Fallback)
			assert.Equal(t, total, raw(t, "SELECT COUNT(*) FROM "+s.Table()))
			assert.Equal(t, total, raw(t, "SELECT COUNT(DISTINCT call_id) FROM "+s.Table()))
			ctx := context.Background()
			for tool, outcome := range map[string]audit.RowOutcome{"ok": audit.OutcomeOK, "public": audit.OutcomeError,
				"raw": audit.OutcomeError, "panic": audit.OutcomePanic, "cancel": audit.OutcomeCanceled} {
				n, err := s.Count(ctx, sqlQuery(tool, outcome))
				require.NoError(t, err)
				assert.Equal(t, counts[tool], n, tool)
			}
			assert.Equal(t, counts["raw"], raw(t, "SELECT COUNT(*) FROM "+s.Table()+" WHERE message = 'dial tcp 10.0.0.1:5432: connection refused'"))
			assert.Equal(t, counts["panic"], raw(t, "SELECT COUNT(*) FROM "+s.Table()+" WHERE message = 'panic: index out of range'"))
		})
	}
}

// countSink counts the rows it takes.
type countSink struct{ n atomic.Int64 }

func (c *countSink) WriteBatch(_ context.Context, b []audit.Record) error {
	c.n.Add(int64(len(b)))
	return nil
}

func sqlQuery(tool string, o audit.RowOutcome) sqlstore.Query {
	return sqlstore.Query{Tool: tool, Outcome: o}
}
