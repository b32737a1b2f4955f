package mcpsdk_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// TestOptionMistakesFailTheConstructor: an option given a value it cannot
// use fails the constructor it is given to, named, at construction: an
// error from AddTool and AddTypedTool, a panic from Middleware and Install.
// A nil Option is skipped.
func TestOptionMistakesFailTheConstructor(t *testing.T) {
	const want = `WithTransport(""): name a transport, or leave the option out for the adapter's detection`
	bad := mcpsdk.WithTransport("")
	s := mcp.NewServer(&mcp.Implementation{Name: "t"}, nil)
	h := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	obj := map[string]any{"type": "object"}

	require.EqualError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "a", InputSchema: obj}, h, bad), "mcpsdk.AddTool: "+want)
	require.EqualError(t, mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "b"}, func(context.Context, *toolctx.Request, struct{}) (any, error) { return nil, nil }, mcpsdk.WithFallbackLogger(nil)),
		"mcpsdk.AddTypedTool: WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()")
	assert.PanicsWithError(t, "mcpsdk.Middleware: "+want, func() { mcpsdk.Middleware(nil, bad) })
	assert.PanicsWithError(t, "mcpsdk.Install: WithVisibility(nil): pass a predicate, or leave the option out for every tool visible",
		func() { mcpsdk.Install(s, nil, mcpsdk.WithVisibility(nil)) })
	assert.NotPanics(t, func() { mcpsdk.Install(s, nil, nil, mcpsdk.WithTransport(toolctx.TransportStdio)) }, "a nil Option is skipped")
	require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "c", InputSchema: obj}, h, nil))
}
