package adapter_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// mustConfig is adapter.NewConfig for options that are right.
func mustConfig(t *testing.T, opts ...adapter.Option) *adapter.Config {
	t.Helper()
	cfg, err := adapter.NewConfig("t", "test.New", opts...)
	require.NoError(t, err)
	return cfg
}

// TestHidden: without WithVisibility nothing is hidden; with it, what the
// predicate refuses is; a predicate that panics hides the tool and is
// logged, the panic value on the server only.
func TestHidden(t *testing.T) {
	req := &toolctx.Request{Tool: "deploy"}
	require.False(t, mustConfig(t).Hidden(req))
	only := func(r *toolctx.Request) bool { return r.Tool == "public" }
	cfg := mustConfig(t, adapter.WithVisibility(only))
	require.True(t, cfg.Hidden(req))
	require.False(t, cfg.Hidden(&toolctx.Request{Tool: "public"}))

	var log bytes.Buffer
	cfg = mustConfig(t, adapter.WithFallbackLogger(slog.New(slog.NewTextHandler(&log, nil))),
		adapter.WithVisibility(func(*toolctx.Request) bool { panic("policy store gone") }))
	require.True(t, cfg.Hidden(req))
	require.Contains(t, log.String(), "the visibility predicate panicked")
	require.Contains(t, log.String(), "policy store gone")
}

// TestVisible: a tools/list keeps the tools the caller may see, in order,
// and drops the ones name refuses.
func TestVisible(t *testing.T) {
	cfg := mustConfig(t, adapter.WithVisibility(func(r *toolctx.Request) bool { return r.Tool != "deploy" && r.Identity != nil }))
	caller := toolctx.Request{Identity: &toolctx.Identity{Subject: "ann"}}
	name := func(s string) (string, bool) { return s, s != "" }
	require.Equal(t, []string{"a", "b"}, adapter.Visible(cfg, caller, []string{"a", "deploy", "", "b"}, name))
	require.Empty(t, adapter.Visible(cfg, toolctx.Request{}, []string{"a"}, name), "the predicate sees the caller")
}
