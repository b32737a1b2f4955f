package audit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/toolctx"
)

// A TraceRef in the call's context (otelmw puts it there) reaches the row
// and its slog attributes; without one the row has no ids.
func TestRowRecordsTheSpan(t *testing.T) {
	var rows []audit.Record
	mw := audit.Interceptor(audit.EmitterFunc(func(_ context.Context, r audit.Record) { rows = append(rows, r) }))
	h := mw(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") }))
	ref := toolctx.TraceRef{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5}}
	h.CallTool(toolctx.WithTraceRef(context.Background(), ref), &toolctx.Request{Tool: "t", CallID: "c1"})
	h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c2"})
	require.Len(t, rows, 2, "two rows")
	assert.Equal(t, "01020300000000000000000000000000", rows[0].TraceID, "trace id")
	assert.Equal(t, "0405000000000000", rows[0].SpanID, "span id")
	attrs := map[string]string{}
	for _, a := range rows[0].Attrs() {
		attrs[a.Key] = a.Value.String()
	}
	assert.Equal(t, rows[0].TraceID, attrs["trace_id"], "slog attribute trace_id")
	assert.Equal(t, rows[0].SpanID, attrs["span_id"], "slog attribute span_id")
	assert.Empty(t, rows[1].TraceID+rows[1].SpanID, "no span, no ids")
}
