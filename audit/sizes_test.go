package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestRowSizes: the row records the raw arguments' length, the result's
// payload as the adapter sends it (a text's bytes, binary data's base64,
// structured JSON) and its number of content blocks; a failure counts the
// public message it is answered with; an input-required answer counts
// nothing; with and without Normalize inside the interceptor.
func TestRowSizes(t *testing.T) {
	img := make([]byte, 10) // base64: 16 bytes
	cases := []struct {
		name          string
		res           *toolctx.CallResult
		bytes, blocks int
	}{
		{"text", toolctx.TextResult("héllo"), 6, 1},
		{"structured", toolctx.StructuredResult(map[string]int{"sum": 42}), len(`{"sum":42}`) + len(`{"sum":42}`), 1},
		{"mixed", &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ab"}, &toolctx.Image{Data: img, MIMEType: "image/png"},
			&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///x", Blob: img}},
			&toolctx.ResourceLink{URI: "file:///y", Name: "y"}}}, 2 + 16 + 16 + len("file:///y"), 4},
		{"map value", &toolctx.CallResult{StructuredContent: map[string]any{"city": "Oslo", "n": 7.0}},
			2 + (len("city") + 4 + len("Oslo") + 2) + (len("n") + 4 + 8), 0}, // estimated: the walk's sizes
		{"struct value", &toolctx.CallResult{StructuredContent: struct {
			A int `json:"a"`
		}{7}}, 8, 0}, // never encoded: 8 bytes
		{"own isError", &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "no such city"}}}, len("no such city"), 1},
		{"public error", toolctx.ErrorResult(errs.NotFound("no such invoice")), len("no such invoice"), 1},
		{"raw error", toolctx.ErrorResult(errors.New("dial tcp 10.0.0.7:5432: connection refused")), -1, 1},
		{"input required", toolctx.InputRequiredResult("s", map[string]toolctx.InputRequest{"a": {Method: toolctx.MethodListRoots}}), 0, 0},
	}
	for _, normalize := range []bool{false, true} {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var got audit.Record
				mws := []toolctx.Middleware{audit.Interceptor(audit.EmitterFunc(func(_ context.Context, r audit.Record) { got = r }))}
				if normalize {
					mws = append(mws, middleware.Normalize(errs.Normalizer{}))
				}
				h, err := middleware.New(mws...).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return c.res })
				require.NoError(t, err)
				args := json.RawMessage(`{"q":"` + strings.Repeat("x", 100) + `"}`)
				out := h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c", Arguments: toolctx.RawArguments(args)})
				assert.Equal(t, len(args), got.RequestBytes, "the raw arguments' length")
				want := c.bytes
				if want < 0 { // the generic message the caller is told
					want = len(toolctx.Classify(context.Background(), out, errs.Normalizer{}).Public.Message)
				}
				assert.Equal(t, want, got.ResponseBytes, "the response's bytes (normalize %v)", normalize)
				assert.Equal(t, c.blocks, got.ContentBlocks, "the content blocks (normalize %v)", normalize)
			})
		}
	}
}
