package mcpgo_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// countingMarshaler counts its encodings.
type countingMarshaler struct{ n *atomic.Int32 }

func (m countingMarshaler) MarshalJSON() ([]byte, error) {
	m.n.Add(1)
	return []byte(`"counted"`), nil
}

// TestSendableCheckedOnce: the check the chain's hooks make of an
// interceptor's result (adapter.Sendable) is the adapter's check: with
// After and Diagnostics in the chain, the result is encoded as often as
// with neither, and delivered.
func TestSendableCheckedOnce(t *testing.T) {
	encodings := func(hooks bool) int32 {
		var n atomic.Int32
		build := func(next toolctx.Handler) toolctx.Handler {
			return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
				_ = next.CallTool(ctx, req)
				return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "x"}}, StructuredContent: map[string]any{"c": countingMarshaler{&n}}}
			})
		}
		var mws []toolctx.Middleware
		if hooks {
			mws = append(mws, middleware.After(func(context.Context, middleware.CallInfo) {}),
				middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}))
		}
		chain := middleware.New(append(mws, build)...)
		s := server.NewMCPServer("x", "1", mcpgo.ServerOption(chain.Middleware()))
		s.AddTool(mcp.NewTool("t"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("fine"), nil
		})
		w := inProcessWire(t, s)
		res, err := call(t, w, "t", nil)
		require.NoError(t, err)
		require.False(t, res.IsError, text(res))
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.JSONEq(t, `{"c":"counted"}`, string(b))
		return n.Load()
	}
	bare, hooked := encodings(false), encodings(true)
	require.Positive(t, bare)
	require.Equal(t, bare, hooked, "the hooks' check is the adapter's: no second encoding")
}

// typeErrArg's UnmarshalJSON returns a type error that holds the canary.
type typeErrArg struct{}

func (*typeErrArg) UnmarshalJSON([]byte) error {
	return &json.UnmarshalTypeError{Value: "string CANARY-typed", Type: reflect.TypeOf(""), Field: "CANARY-field"}
}

// TestTypedHandlerUnmarshalerTypeError: a type error an UnmarshalJSON
// method returns is not the caller's own: TypedHandler answers with the
// fixed message, not the error's value and field.
func TestTypedHandlerUnmarshalerTypeError(t *testing.T) {
	type in struct {
		A typeErrArg `json:"a"`
	}
	s := server.NewMCPServer("x", "1", mcpgo.ServerOption(nil))
	s.AddTool(mcp.NewTool("t"), mcpgo.TypedHandler(func(context.Context, mcp.CallToolRequest, in) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("unreachable"), nil
	}))
	w := inProcessWire(t, s)
	res, err := call(t, w, "t", map[string]any{"a": "x"})
	require.NoError(t, err)
	require.True(t, res.IsError, text(res))
	require.NotContains(t, string(w.bytes()), "CANARY", "the method's words never reach the client: %s", text(res))
	require.Contains(t, text(res), "invalid arguments", text(res))
}
