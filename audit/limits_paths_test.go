package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// hugeCall is a call whose row is far over the default limits in every
// field a client or a cause can make large.
func hugeCall(t *testing.T) (toolctx.Handler, *toolctx.Request) {
	t.Helper()
	big := strings.Repeat("x", 200_000)
	h := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(errors.New("raw " + big))
	})
	args, err := json.Marshal(map[string]string{"a": big})
	require.NoError(t, err)
	return h, &toolctx.Request{Tool: strings.Repeat("t", 5000), CallID: strings.Repeat("c", 5000),
		Meta: map[string]any{"k": big}, Arguments: toolctx.RawArguments(args)}
}

// requireBounded checks r is within audit.DefaultLimits.
func requireBounded(t *testing.T, what string, r audit.Record) {
	t.Helper()
	l := audit.DefaultLimits()
	require.LessOrEqual(t, len(r.Message), l.Message, "%s: the message is cut", what)
	require.Contains(t, r.Message, "…[truncated ", "%s: with the marker", what)
	require.LessOrEqual(t, len(r.Tool), l.Tool, "%s: the tool is cut", what)
	require.LessOrEqual(t, len(r.CallID), l.ID, "%s: the call id is cut", what)
	require.LessOrEqual(t, len(r.Arguments), l.Arguments, "%s: the arguments are cut", what)
	b, err := json.Marshal(r.ClientMeta)
	require.NoError(t, err)
	require.LessOrEqual(t, len(b), l.ClientMeta, "%s: the client's _meta is cut", what)
}

func redactNothing(_ string, args json.RawMessage) json.RawMessage { return args }

// TestDirectAppliesLimits: a row through audit.Direct reaches the sink cut
// to audit.DefaultLimits, as a row through Async does.
func TestDirectAppliesLimits(t *testing.T) {
	s := &memSink{}
	h, req := hugeCall(t)
	chain, err := middleware.New(audit.Interceptor(audit.Direct(s, audit.DirectConfig{FallbackLogger: discardLogger(nil)}), audit.WithArguments(redactNothing))).Then(h)
	require.NoError(t, err)
	chain.CallTool(context.Background(), req)
	require.Len(t, s.rows, 1, "one row")
	requireBounded(t, "Direct", s.rows[0])
}

// TestSlogSinkEmitAppliesLimits: a row emitted to a SlogSink is logged cut
// to audit.DefaultLimits.
func TestSlogSinkEmitAppliesLimits(t *testing.T) {
	var out syncbuf.Buffer
	sink := audit.NewSlogSink(slog.NewJSONHandler(&out, nil))
	h, req := hugeCall(t)
	chain, err := middleware.New(audit.Interceptor(sink, audit.WithArguments(redactNothing))).Then(h)
	require.NoError(t, err)
	chain.CallTool(context.Background(), req)
	require.Less(t, len(out.String()), 40_000, "the logged row is bounded, not 600 KB")
	require.Contains(t, out.String(), "…[truncated ", "with the marker")
}

// TestEmitterPanicFallbackAppliesLimits: the row of an emitter that
// panicked is logged to the fallback logger cut to audit.DefaultLimits.
func TestEmitterPanicFallbackAppliesLimits(t *testing.T) {
	var out syncbuf.Buffer
	h, req := hugeCall(t)
	panicky := audit.EmitterFunc(func(context.Context, audit.Record) { panic("emitter down") })
	chain, err := middleware.New(audit.Interceptor(panicky, audit.WithArguments(redactNothing), audit.WithFallbackLogger(discardLogger(&out)))).Then(h)
	require.NoError(t, err)
	chain.CallTool(context.Background(), req)
	require.Contains(t, out.String(), "emitter panicked", "the row went to the fallback logger")
	require.Less(t, len(out.String()), 40_000, "the logged row is bounded, not 600 KB")
	require.Contains(t, out.String(), "…[truncated ", "with the marker")
}
