package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// TestStoreFailingAtRunTimeNeverFailsTheCall: the database goes away under
// the writer (the store is closed); every call still gets its own result,
// and every row reaches the fallback sink.
func TestStoreFailingAtRunTimeNeverFailsTheCall(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s, _ := b.open(t)
			fb := &countSink{}
			w := audit.NewAsync(s, audit.AsyncConfig{BatchSize: 16, FlushInterval: time.Millisecond, MaxRetries: 2,
				Backoff: time.Millisecond, Fallback: fb, FallbackLogger: quiet()})
			h, err := middleware.New(audit.Interceptor(w), middleware.Recover).ThenFunc(mixedHandler)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			const n = 200
			for i := 0; i < n; i++ {
				res := h.CallTool(context.Background(), &toolctx.Request{Tool: "ok", CallID: adapter.NewCallID()})
				require.False(t, res.IsError)
			}
			require.NoError(t, w.Close(context.Background()))
			st := w.Stats()
			assert.Equal(t, int64(n), fb.n.Load())
			assert.Equal(t, uint64(n), st.Fallback)
			assert.Zero(t, st.Written)
			assert.NotZero(t, st.Retried)
		})
	}
}
