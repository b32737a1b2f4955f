package audit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestRowWrittenInPlaceIsTheEmittedRow: into an Async the interceptor
// builds the row in its slot of the queue (a call whose _meta has no keys
// of the client's own and whose failure has no detail), not in a Record it
// then emits; the row the sink gets is the same, field for field, as the
// one an Emitter is handed for the same call (cut to the same limits), for
// every row of the behaviour table, with a trace, with a redactor, and
// with a tool name over its limit.
func TestRowWrittenInPlaceIsTheEmittedRow(t *testing.T) {
	redact := func(_ string, args json.RawMessage) json.RawMessage { return args[:len(args)-1] } // a slice of the call's buffer
	ref := toolctx.TraceRef{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5}}
	for _, tc := range behaviourTable() {
		for _, variant := range []string{"plain", "traced", "redacted", "long-tool"} {
			t.Run(tc.name+"/"+variant, func(t *testing.T) {
				var opts []audit.Option
				if variant == "redacted" {
					opts = append(opts, audit.WithArguments(redact))
				}
				var c capture
				s := &memSink{}
				w := audit.NewAsync(s, audit.AsyncConfig{FallbackLogger: discardLogger(nil)})
				ms := []toolctx.Middleware{audit.Interceptor(&c, opts...), audit.Interceptor(w, opts...)}
				if tc.timeout > 0 {
					ms = append(ms, middleware.Timeout(tc.timeout))
				}
				ms = append(ms, middleware.Recover)
				if tc.guard != nil {
					ms = append(ms, tc.guard)
				}
				h, err := middleware.New(ms...).Then(tc.handler)
				require.NoError(t, err)
				ctx := context.Background()
				if tc.ctx != nil {
					var cancel context.CancelFunc
					ctx, cancel = tc.ctx()
					defer cancel()
				}
				if variant == "traced" {
					ctx = toolctx.WithTraceRef(ctx, ref)
				}
				req := newReq()
				req.Meta = map[string]any{"io.modelcontextprotocol/progressToken": "p1"} // the protocol's keys only
				if variant == "long-tool" {
					req.Tool = strings.Repeat("t", 1000)
				}
				h.CallTool(ctx, req)
				require.NoError(t, w.Close(context.Background()))

				emitted := c.all()
				require.Len(t, emitted, 1)
				require.Len(t, s.rows, 1)
				want, got := emitted[0], s.rows[0]
				audit.DefaultLimits().Apply(&want)
				assert.False(t, got.Time.IsZero())
				assert.WithinDuration(t, want.Time, got.Time, time.Minute)
				assert.LessOrEqual(t, got.Duration, want.Duration, "the inner interceptor's call is inside the outer's")
				want.Time, want.Duration = got.Time, got.Duration
				assert.Equal(t, want, got)
				if variant == "redacted" {
					require.NotEmpty(t, got.Arguments)
					args := req.Arguments.JSON()
					assert.NotSame(t, &args[0], &got.Arguments[0], "the queued row has its own copy of the arguments")
				}
				if variant == "long-tool" {
					assert.LessOrEqual(t, len(got.Tool), audit.DefaultLimits().Tool, "cut in its slot")
				}
			})
		}
	}
}

// TestRowsInPlaceUnderBlockLoseNothing: rows written in place by many
// calls into a small queue under Block, while the sink takes its time,
// are all written once, in order per caller, and Close flushes them.
func TestRowsInPlaceUnderBlockLoseNothing(t *testing.T) {
	s := &memSink{}
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 8, BatchSize: 4, Policy: audit.Block, BlockTimeout: time.Hour, FallbackLogger: discardLogger(nil)})
	h, err := middleware.New(audit.Interceptor(w)).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(errs.NotFound("no such record"))
	})
	require.NoError(t, err)
	const callers, each = 8, 300
	done := make(chan struct{})
	for g := range callers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c" + string(rune('a'+g)) + "-" + itoa(i)})
			}
		}()
	}
	for range callers {
		<-done
	}
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, audit.Stats{Written: callers * each}, w.Stats())
	seen := map[string]bool{}
	next := map[byte]int{}
	for _, r := range s.rows {
		require.False(t, seen[r.CallID], "%s written twice", r.CallID)
		seen[r.CallID] = true
		g := r.CallID[1]
		assert.Equal(t, "c"+string(rune(g))+"-"+itoa(next[g]), r.CallID, "a caller's rows in the order it made them")
		next[g]++
		assert.Equal(t, audit.OutcomeError, r.Outcome)
	}
	assert.Len(t, seen, callers*each)
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
