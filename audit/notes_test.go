package audit_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestRecordNotes: what an interceptor notes on the result reaches the row,
// through Normalize, on success and failure, and into the slog attributes.
func TestRecordNotes(t *testing.T) {
	for _, res := range []*toolctx.CallResult{
		toolctx.TextResult("ok").WithNote("attempts", "3"),
		toolctx.ErrorResult(errs.Unavailable("down")).WithNote("attempts", "3"),
	} {
		var rows []audit.Record
		emit := audit.EmitterFunc(func(_ context.Context, r audit.Record) { rows = append(rows, r) })
		h, err := middleware.New(audit.Interceptor(emit), middleware.Normalize(errs.Normalizer{}), middleware.Recover).
			Then(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return res }))
		require.NoError(t, err, "chain")
		h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c1"})
		require.Len(t, rows, 1, "one row")
		assert.Equal(t, []toolctx.Note{{Key: "attempts", Value: "3"}}, rows[0].Notes, "the row has the note")

		var b strings.Builder
		slog.New(slog.NewTextHandler(&b, nil)).Info("row", "r", rows[0])
		assert.Contains(t, b.String(), "r.notes.attempts=3", "the note is a slog attribute")
	}
}
