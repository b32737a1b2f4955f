package adapter_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// TestNewConfigKnobs: an option given a value it cannot use is an error
// naming it (the first one, when there are several), never a silent
// default; a nil Option is skipped; the defaults are the zero Config's.
func TestNewConfigKnobs(t *testing.T) {
	for name, tc := range map[string]struct {
		opt  adapter.Option
		want string
	}{
		"nil logger":      {adapter.WithFallbackLogger(nil), "WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()"},
		"empty transport": {adapter.WithTransport(""), `WithTransport(""): name a transport, or leave the option out for the adapter's detection`},
		"nil predicate":   {adapter.WithVisibility(nil), "WithVisibility(nil): pass a predicate, or leave the option out for every tool visible"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := adapter.NewConfig("t", "test.New", tc.opt)
			require.EqualError(t, err, "test.New: "+tc.want)
			assert.Nil(t, cfg)
			_, err = adapter.NewConfig("t", "test.New", tc.opt, adapter.WithFallbackLogger(nil))
			require.EqualError(t, err, "test.New: "+tc.want, "the first mistake is reported")
		})
	}

	cfg, err := adapter.NewConfig("t", "test.New", nil, adapter.WithTransport(toolctx.TransportStdio), nil)
	require.NoError(t, err, "a nil Option is skipped")
	assert.Equal(t, toolctx.TransportStdio, cfg.Transport)
	cfg, err = adapter.NewConfig("t", "test.New")
	require.NoError(t, err)
	assert.Equal(t, &adapter.Config{Name: "t"}, cfg, "no option: the zero Config's defaults")
	assert.PanicsWithError(t, "test.Must: WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()",
		func() { adapter.MustConfig("t", "test.Must", adapter.WithFallbackLogger(nil)) })
	l := slog.New(slog.DiscardHandler)
	cfg, err = adapter.NewConfig("t", "test.New", adapter.WithFallbackLogger(l))
	require.NoError(t, err)
	assert.Same(t, l, cfg.Logger)
}

// TestNewToolConfig: a registration checks the handler, then the options,
// then the tool's name, each failure naming the constructor.
func TestNewToolConfig(t *testing.T) {
	_, err := adapter.NewToolConfig("t", "test.AddTool", "bad name", true, adapter.WithFallbackLogger(nil))
	require.ErrorIs(t, err, toolctx.ErrNilHandler)
	require.EqualError(t, err, "toolmw: nil handler: test.AddTool was given nil")
	_, err = adapter.NewToolConfig("t", "test.AddTool", "bad name", false, adapter.WithFallbackLogger(nil))
	require.EqualError(t, err, "test.AddTool: WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()")
	_, err = adapter.NewToolConfig("t", "test.AddTool", "bad name", false)
	var nameErr *errs.ToolNameError
	require.ErrorAs(t, err, &nameErr)
	cfg, err := adapter.NewToolConfig("t", "test.AddTool", "ok", false, adapter.WithTransport(toolctx.TransportSSE))
	require.NoError(t, err)
	assert.Equal(t, toolctx.TransportSSE, cfg.Transport)
}
