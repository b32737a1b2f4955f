package audit_test

import (
	"context"
	"errors"
	"log/slog"
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

// TestRecordNotesInsideTimeout: the notes a guard inside middleware.Timeout
// attaches to a result that comes back after the deadline reach the row of
// the timed-out call, whatever the late result was (a success, a raw
// error, a public error, the deadline's own error).
func TestRecordNotesInsideTimeout(t *testing.T) {
	late := map[string]func(ctx context.Context) *toolctx.CallResult{
		"success":      func(context.Context) *toolctx.CallResult { return toolctx.TextResult("late") },
		"raw error":    func(context.Context) *toolctx.CallResult { return toolctx.ErrorResult(errors.New("read tcp: reset")) },
		"public error": func(context.Context) *toolctx.CallResult { return toolctx.ErrorResult(errs.NotFound("gone")) },
		"ctx error":    func(ctx context.Context) *toolctx.CallResult { return toolctx.ErrorResult(ctx.Err()) },
	}
	for name, result := range late {
		t.Run(name, func(t *testing.T) {
			var rows []audit.Record
			emit := audit.EmitterFunc(func(_ context.Context, r audit.Record) { rows = append(rows, r) })
			guard := func(next toolctx.Handler) toolctx.Handler {
				return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
					return next.CallTool(ctx, req).WithNote("attempts", "2")
				})
			}
			h, err := middleware.New(audit.Interceptor(emit), middleware.Normalize(errs.Normalizer{}), middleware.Recover,
				middleware.Timeout(time.Millisecond), guard).
				Then(toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
					<-ctx.Done()
					return result(ctx)
				}))
			require.NoError(t, err, "chain")
			res := h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c1"})
			require.Equal(t, errs.CodeTimeout, res.Error.Code, "the call timed out")
			require.Len(t, rows, 1, "one row")
			assert.Equal(t, audit.OutcomeTimeout, rows[0].Outcome, "the row says timeout")
			assert.Equal(t, []toolctx.Note{{Key: "attempts", Value: "2"}}, rows[0].Notes, "the guard's note reaches the row")
		})
	}
}
