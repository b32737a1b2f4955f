package middleware_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

const sizeCanary = "CANARY-past-the-limit-postgres://admin:hunter2@db"

// The behaviour-table row "a guard before the handler rejects", for
// MaxArgBytes, through both adapters.
func TestMaxArgBytesThroughAdapters(t *testing.T) {
	var ran atomic.Int32
	tools := map[string]toolctx.Handler{"echo": toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		ran.Add(1)
		return toolctx.TextResult("ran")
	})}
	forEachSDK(t, tools, []toolctx.Middleware{middleware.MaxArgBytes(64)}, func(t *testing.T, call caller, side *serverSide) {
		ran.Store(0)
		ok := call(t, context.Background(), callOpts{Tool: "echo", Args: map[string]any{"q": "small"}})
		assert.False(t, ok.IsError, "arguments within the limit pass: %s", ok.JSON)
		assert.Equal(t, int32(1), ran.Load(), "and the handler ran")

		got := call(t, context.Background(), callOpts{Tool: "echo", Args: map[string]any{"q": strings.Repeat("x", 100)}})
		require.True(t, got.IsError, "arguments over the limit are rejected: %s", got.JSON)
		assert.Equal(t, "the arguments are larger than the server allows", got.Text, "the public message")
		assert.Equal(t, errs.CodeInvalidArguments, got.Code, "the code")
		assert.Equal(t, float64(64), got.Detail["max_bytes"], "the limit in detail")
		assert.Equal(t, int32(1), ran.Load(), "the handler did not run")

		rows, diags := side.take()
		require.Len(t, rows, 2, "one row per call")
		assert.Equal(t, audit.OutcomeRejected, rows[1].Outcome, "the row: rejected")
		assert.Equal(t, errs.CodeInvalidArguments, rows[1].Code, "with its code")
		assert.Empty(t, diags, "no diagnostics")
	})
}

// MaxResultBytes in both modes, through both adapters: the client gets the
// error or a truncated text with the marker, never the bytes past the
// limit; the row says which and the original size.
func TestMaxResultBytesThroughAdapters(t *testing.T) {
	big := strings.Repeat("a", 1000) + sizeCanary
	bigSize := strconv.Itoa(len(big) + 2) // a JSON string: its quotes
	tools := map[string]toolctx.Handler{
		"big":   textTool(big),
		"small": textTool("fits"),
		"structured": toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			return toolctx.StructuredResult(map[string]string{"blob": big})
		}),
		"own_error": toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			return &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: big}}}
		}),
	}
	t.Run("reject", func(t *testing.T) {
		forEachSDK(t, tools, []toolctx.Middleware{middleware.MaxResultBytes(512, middleware.ResultReject)}, func(t *testing.T, call caller, side *serverSide) {
			assert.Equal(t, "fits", call(t, context.Background(), callOpts{Tool: "small"}).Text, "a small result passes")
			for _, tool := range []string{"big", "structured", "own_error"} {
				got := call(t, context.Background(), callOpts{Tool: tool})
				require.True(t, got.IsError, "%s: over the limit: %s", tool, got.JSON)
				assert.Equal(t, errs.CodeResultTooLarge, got.Code, "%s: result_too_large", tool)
				assert.Equal(t, float64(512), got.Detail["max_bytes"], "%s: the limit in detail", tool)
				assert.NotContains(t, got.JSON, "aaaa", "%s: none of the result reaches the client", tool)
				assert.NotContains(t, got.JSON, "CANARY", "%s: the canary stays on the server", tool)
			}
			rows, diags := side.take()
			require.Len(t, rows, 4, "one row per call")
			for _, r := range rows[1:] {
				assert.Equal(t, errs.CodeResultTooLarge, r.Code, "%s: the row's code", r.Tool)
				assert.Equal(t, audit.OutcomeError, r.Outcome, "%s: an error, not a rejection: the tool ran", r.Tool)
				require.Len(t, r.Notes, 1, "%s: one note", r.Tool)
				assert.Equal(t, middleware.NoteResultBytes, r.Notes[0].Key, "%s: the note says the size", r.Tool)
				assert.NotContains(t, r.Message+r.Notes[0].Value, "CANARY", "%s: the row never holds the result", r.Tool)
			}
			assert.Equal(t, bigSize, rows[1].Notes[0].Value, "the original size, as JSON counts it")
			assert.Empty(t, diags, "no diagnostics: a limit is not a bug")
		})
	})
	t.Run("truncate", func(t *testing.T) {
		forEachSDK(t, tools, []toolctx.Middleware{middleware.MaxResultBytes(512, middleware.ResultTruncate)}, func(t *testing.T, call caller, side *serverSide) {
			got := call(t, context.Background(), callOpts{Tool: "big"})
			require.False(t, got.IsError, "a truncated result is a success: %s", got.JSON)
			assert.True(t, strings.HasPrefix(got.Text, "aaaa"), "the text starts as the tool's did")
			assert.True(t, strings.HasSuffix(got.Text, "[truncated by the server: the result was "+bigSize+" bytes, over its limit]"), "and ends with the visible marker: %q", got.Text)
			assert.LessOrEqual(t, len(got.Text)+2, 512, "the text fits the limit")
			assert.NotContains(t, got.JSON, "CANARY", "what was past the limit never reaches the client")

			own := call(t, context.Background(), callOpts{Tool: "own_error"})
			assert.True(t, own.IsError, "a tool's own error stays an error when truncated")
			assert.Contains(t, own.Text, "[truncated by the server", "with the marker")

			st := call(t, context.Background(), callOpts{Tool: "structured"})
			assert.Equal(t, errs.CodeResultTooLarge, st.Code, "structured content over the limit cannot be cut: rejected")

			rows, diags := side.take()
			require.Len(t, rows, 3, "one row per call")
			assert.Equal(t, audit.OutcomeOK, rows[0].Outcome, "the truncated call's row: ok")
			assert.Equal(t, []toolctx.Note{{Key: middleware.NoteTruncatedFrom, Value: bigSize}}, rows[0].Notes, "truncated from N bytes")
			assert.Equal(t, errs.CodeToolError, rows[1].Code, "the tool's own error keeps its code")
			assert.Equal(t, middleware.NoteTruncatedFrom, rows[1].Notes[0].Key, "and says it was truncated")
			assert.Equal(t, middleware.NoteResultBytes, rows[2].Notes[0].Key, "the rejected one says its size")
			assert.Empty(t, diags, "no diagnostics")
		})
	})
}

func TestMaxResultBytesUnit(t *testing.T) {
	img := &toolctx.Image{Data: make([]byte, 300), MIMEType: "image/png"}
	h := thenG(t, middleware.New(middleware.MaxResultBytes(300, middleware.ResultTruncate)),
		returning(&toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "first"}, img}}))
	res := h.CallTool(context.Background(), reqG("t"))
	require.Len(t, res.Content, 2, "the text that fits, then the marker in place of the image")
	assert.Equal(t, "first", res.Content[0].(*toolctx.Text).Text, "the first item is kept whole")
	assert.Contains(t, res.Content[1].(*toolctx.Text).Text, "[truncated by the server", "the image is replaced by the marker")

	raw := toolctx.ErrorResult(errors.New(strings.Repeat("x", 1000)))
	h = thenG(t, middleware.New(middleware.MaxResultBytes(300, middleware.ResultReject)), returning(raw))
	assert.Same(t, raw, h.CallTool(context.Background(), reqG("t")), "a raw failure is left to Normalize: the client only gets its public message")

	for name, f := range map[string]func(){
		"zero args":     func() { middleware.MaxArgBytes(0) },
		"zero result":   func() { middleware.MaxResultBytes(0, middleware.ResultReject) },
		"tiny truncate": func() { middleware.MaxResultBytes(100, middleware.ResultTruncate) },
		"unknown mode":  func() { middleware.MaxResultBytes(1000, middleware.ResultLimitMode(7)) },
	} {
		assert.Panics(t, f, "%s: a construction mistake fails at construction", name)
	}
}
