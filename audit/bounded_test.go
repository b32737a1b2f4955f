package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestDefaultConfigNeverWaitsOnAStalledSink: with AsyncConfig{} and a sink
// that never returns, 20,000 calls all return (the loop finishing before
// the sink is released is the proof), and every row is accounted for.
func TestDefaultConfigNeverWaitsOnAStalledSink(t *testing.T) {
	s := &stallSink{release: make(chan struct{})}
	w := audit.NewAsync(s, audit.AsyncConfig{Fallback: &memSink{}, FallbackLogger: discardLogger(nil)})
	h, err := middleware.New(audit.Interceptor(w)).ThenFunc(okHandler)
	require.NoError(t, err)
	const n = 20000
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := 0; i < n; i++ {
			h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: fmt.Sprint(i)})
		}
	}()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatal("the calls waited on the stalled sink")
	}
	assert.NotZero(t, w.Stats().Dropped, "the queue filled: rows were dropped, not waited for")
	close(s.release)
	require.NoError(t, w.Close(context.Background()))
	st := w.Stats()
	assert.Equal(t, uint64(n), st.Written+st.Dropped, "every row is written or counted as dropped: %+v", st)
}

// TestQueuedRowsHoldNoReferenceToTheCall: the store stalls while 8,192
// calls with 100 KB arguments (and _meta of the client's own) go through the
// interceptor into the default Async: every row is queued, and the heap
// grows by the rows only (a few MB), not by the calls' arguments (800 MB).
func TestQueuedRowsHoldNoReferenceToTheCall(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 800 MB of arguments")
	}
	s := &stallSink{release: make(chan struct{})}
	// The store stalls until the test releases it: no write may time out
	// first, however long 8192 calls take on a loaded machine (with the
	// default 10 s, rows went to the fallback under -race on 2 busy cores).
	w := audit.NewAsync(s, audit.AsyncConfig{Fallback: &memSink{}, FallbackLogger: discardLogger(nil), WriteTimeout: time.Hour})
	result := toolctx.TextResult("ok")
	h, err := middleware.New(audit.Interceptor(w)).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return result
	})
	require.NoError(t, err)
	const calls, argBytes = 8192, 100 << 10
	arg := `{"q":"` + strings.Repeat("x", argBytes) + `"}`
	defer debug.SetGCPercent(debug.SetGCPercent(2000)) // fewer collections while 800 MB go by
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < calls; i++ {
		req := &toolctx.Request{
			Tool: "search", CallID: fmt.Sprintf("call-%d", i), Transport: toolctx.TransportStdio,
			Arguments: toolctx.RawArguments(append(json.RawMessage(nil), arg...)), // a fresh 100 KB per call
			Meta:      map[string]any{"traceparent": "00-abc-01", "io.modelcontextprotocol/progressToken": 7},
		}
		h.CallTool(context.Background(), req)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	st := w.Stats()
	t.Logf("heap growth with %d rows queued behind a stalled store (100 KB arguments each): %.1f MB; %+v",
		calls, float64(growth)/(1<<20), st)
	assert.Zero(t, st.Dropped, "every row is held (queue, batch being handed over, batch being written)")
	assert.Less(t, growth, int64(8<<20), "the queued rows pin their calls")
	close(s.release)
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, uint64(calls), w.Stats().Written)
}

func TestLimitsCutWithAMarker(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2,000 bytes
	r := audit.Record{
		Tool: long, CallID: long, Message: long, Path: long,
		ClientMeta: map[string]any{"a": "small", "b": strings.Repeat("m", 5000), "c": 1.0},
		Detail:     map[string]any{"feedback": long + long + long},
		Arguments:  json.RawMessage(`{"blob":"` + strings.Repeat("z", 20000) + `"}`),
	}
	audit.DefaultLimits().Apply(&r)
	for name, v := range map[string]string{"tool": r.Tool, "call id": r.CallID, "path": r.Path} {
		assert.True(t, utf8.ValidString(v), "%s is cut on a rune boundary", name)
		assert.Contains(t, v, "…[truncated 2000 bytes]", "%s has the marker", name)
	}
	assert.LessOrEqual(t, len(r.Tool), 256, "tool within its limit")
	assert.LessOrEqual(t, len(r.CallID), 256, "call id within its limit")
	assert.Equal(t, long, r.Message, "a 2,000-byte message is within its 4 KB limit")
	assert.Equal(t, "small", r.ClientMeta["a"], "a key that fits is kept")
	assert.NotContains(t, r.ClientMeta, "b", "the key that does not fit is left out")
	assert.Equal(t, map[string]any{"dropped_keys": 1, "bytes": 5032}, r.ClientMeta["toolmw_truncated"], "the marker says what was left out")
	metaJSON, err := json.Marshal(r.ClientMeta)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(metaJSON), 4096, "the cut _meta is within its limit")
	assert.Contains(t, r.Detail, "toolmw_truncated", "the detail is cut too")
	require.True(t, json.Valid(r.Arguments), "cut arguments are still JSON")
	assert.LessOrEqual(t, len(r.Arguments), 16384+64, "arguments within their limit")
	assert.True(t, strings.HasPrefix(string(r.Arguments), `{"toolmw_truncated":{"bytes":20011,`), "the marker has the original size")

	small := audit.Record{Tool: "search", Message: "fine", ClientMeta: map[string]any{"k": "v"}}
	allocs := testing.AllocsPerRun(100, func() { audit.DefaultLimits().Apply(&small) })
	assert.Zero(t, allocs, "a row within the limits costs no allocation")

	custom := audit.Record{Tool: strings.Repeat("t", 100)}
	audit.Limits{Tool: 40}.Apply(&custom)
	assert.Equal(t, strings.Repeat("t", 16)+"…[truncated 100 bytes]", custom.Tool, "the limit is configurable")
	unlimited := audit.Record{Tool: strings.Repeat("t", 100000)}
	audit.Limits{Tool: -1}.Apply(&unlimited)
	assert.Len(t, unlimited.Tool, 100000, "a negative limit is no limit")
}

// TestAsyncCutsRowsToItsLimits: a 1 MB tool name and _meta through the
// interceptor reach the sink cut to the configured limits.
func TestAsyncCutsRowsToItsLimits(t *testing.T) {
	s := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{Limits: audit.Limits{Tool: 64, ClientMeta: 128}, FallbackLogger: discardLogger(nil)})
	h, err := middleware.New(audit.Interceptor(w)).ThenFunc(okHandler)
	require.NoError(t, err)
	huge := strings.Repeat("n", 1<<20)
	h.CallTool(context.Background(), &toolctx.Request{Tool: huge, CallID: "c1", Meta: map[string]any{"big": huge}})
	require.NoError(t, w.Close(context.Background()))
	require.Len(t, s.rows, 1)
	assert.LessOrEqual(t, len(s.rows[0].Tool), 64)
	assert.True(t, strings.HasSuffix(s.rows[0].Tool, "…[truncated 1048576 bytes]"), "the tool name ends in the marker: %q", s.rows[0].Tool)
	b, err := json.Marshal(s.rows[0].ClientMeta)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), 128, "the _meta is within its limit: %s", b)
}

var _ sync.Locker = (*sync.Mutex)(nil)
