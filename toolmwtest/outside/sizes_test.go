package outside

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestRowSizesFromOutside: the row's request and response sizes and
// content-block counts against what the client sent and received, on both
// SDKs and every transport, for results of many blocks (text with escapes
// and non-ASCII, images), an empty result, a result of structured content
// alone, and a failure.
func TestRowSizesFromOutside(t *testing.T) {
	each(t, func(t *testing.T, sdk, tr string) {
		var kept rows
		many := func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
			var a struct{ N int }
			_ = json.Unmarshal(req.Arguments.JSON(), &a)
			res := &toolctx.CallResult{}
			for i := range a.N {
				switch i % 4 {
				case 0:
					res.Content = append(res.Content, &toolctx.Text{Text: fmt.Sprintf("line %d \"quoted\" <b> é 😀\n", i)})
				case 1:
					res.Content = append(res.Content, &toolctx.Image{Data: []byte(strings.Repeat("\x00\xff", i)), MIMEType: "image/png"})
				case 2:
					res.Content = append(res.Content, &toolctx.Text{Text: ""})
				default:
					res.Content = append(res.Content, &toolctx.Text{Text: strings.Repeat("\u2028", i)})
				}
			}
			return res
		}
		c := serve(t, sdk, tr, middleware.New(audit.Interceptor(audit.EmitterFunc(kept.emit)), middleware.Normalize(errs.Normalizer{}), middleware.Recover), map[string]tool{
			"many":  {h: toolctx.HandlerFunc(many)},
			"empty": {h: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return &toolctx.CallResult{} })},
			"structured": {h: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return &toolctx.CallResult{StructuredContent: json.RawMessage(`{"k":[1,2,3],"é":"x"}`)}
			})},
			"fails": {h: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errs.NotFound("no such order"))
			})},
		})
		check := func(tool, args string) {
			t.Helper()
			a := c.Call(t, tool, args, nil)
			require.NoError(t, a.Err)
			var got struct {
				Content []struct {
					Type, Text, Data string
				} `json:"content"`
				Structured json.RawMessage `json:"structuredContent"`
			}
			require.NoError(t, json.Unmarshal(a.Result, &got))
			want := 0
			for _, b := range got.Content {
				want += len(b.Text) + len(b.Data)
			}
			rs := kept.take()
			require.Len(t, rs, 1)
			r := rs[0]
			assert.Equal(t, len(args), r.RequestBytes, "%s %s: the request's size is the arguments' JSON", tool, args)
			assert.Equal(t, len(got.Content), r.ContentBlocks, "%s: the blocks the client received", tool)
			if tool == "structured" {
				want += len(`{"k":[1,2,3],"é":"x"}`)
			}
			assert.Equal(t, want, r.ResponseBytes, "%s %s: the payload the client received", tool, args)
		}
		for _, n := range []int{0, 1, 7, 300} {
			check("many", fmt.Sprintf(`{"N":%d}`, n))
		}
		check("empty", `{}`)
		check("structured", `{"x":"é😀","y":[null,1e3]}`)
		check("fails", `{}`)
	})
}
