package adapter_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// TestHidden: without WithVisibility nothing is hidden (a nil predicate is
// ignored); with it, what the predicate refuses is; a predicate that
// panics hides the tool and is logged, the panic value on the server only.
func TestHidden(t *testing.T) {
	req := &toolctx.Request{Tool: "deploy"}
	require.False(t, adapter.NewConfig("t").Hidden(req))
	require.False(t, adapter.NewConfig("t", adapter.WithVisibility(nil)).Hidden(req))
	only := func(r *toolctx.Request) bool { return r.Tool == "public" }
	cfg := adapter.NewConfig("t", adapter.WithVisibility(only))
	require.True(t, cfg.Hidden(req))
	require.False(t, cfg.Hidden(&toolctx.Request{Tool: "public"}))

	var log bytes.Buffer
	cfg = adapter.NewConfig("t", adapter.WithFallbackLogger(slog.New(slog.NewTextHandler(&log, nil))),
		adapter.WithVisibility(func(*toolctx.Request) bool { panic("policy store gone") }))
	require.True(t, cfg.Hidden(req))
	require.Contains(t, log.String(), "the visibility predicate panicked")
	require.Contains(t, log.String(), "policy store gone")
}
