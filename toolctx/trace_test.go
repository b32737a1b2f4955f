package toolctx_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/toolctx"
)

func TestTraceRef(t *testing.T) {
	bg := context.Background()
	assert.True(t, toolctx.TraceRefFrom(bg).IsZero(), "no TraceRef in a plain context")
	tr, sp := toolctx.TraceRef{}.HexIDs()
	assert.Empty(t, tr+sp, "the zero TraceRef has no ids")

	ref := toolctx.TraceRef{
		TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	}
	ctx := toolctx.WithTraceRef(context.WithValue(bg, struct{ k int }{1}, "v"), ref)
	assert.Equal(t, ref, toolctx.TraceRefFrom(ctx), "read back")
	assert.Equal(t, "v", ctx.Value(struct{ k int }{1}), "other values pass through")
	tr, sp = toolctx.TraceRefFrom(ctx).HexIDs()
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", tr, "the W3C trace id")
	assert.Equal(t, "00f067aa0ba902b7", sp, "the W3C span id")
}
