package mcpsdk_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// rowLog collects audit rows.
type rowLog struct {
	mu   sync.Mutex
	rows []audit.Record
}

func (l *rowLog) Emit(_ context.Context, r audit.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, r)
}

func (l *rowLog) take() []audit.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.rows
	l.rows = nil
	return out
}

// countingMarshaler counts its encodings.
type countingMarshaler struct{ n *atomic.Int32 }

func (m countingMarshaler) MarshalJSON() ([]byte, error) {
	m.n.Add(1)
	return []byte(`"counted"`), nil
}

// TestInterceptorUnencodableRow: a result an interceptor inside the audit
// interceptor builds that cannot be encoded is audited as what the client
// gets, an internal failure whose message is the encoder's error (the
// secret it quotes included), not as a success; Diagnostics reports it;
// the adapter does not log it again. An interceptor's result that does
// encode is encoded once, by the check, and delivered.
func TestInterceptorUnencodableRow(t *testing.T) {
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
	})
	var encodings atomic.Int32
	replace := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			var in failArgs
			_ = json.Unmarshal(req.Arguments.JSON(), &in)
			res := next.CallTool(ctx, req)
			if in.Shape == "counted" {
				return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "counted"}}, StructuredContent: map[string]any{"c": countingMarshaler{&encodings}}}
			}
			if r := hostileResult(in.Shape, secretFor(in.ID)); r != nil {
				return r
			}
			return res
		})
	}
	rows := &rowLog{}
	var diags atomic.Int32
	chain := middleware.New(audit.Interceptor(rows, audit.WithFallbackLogger(logger)),
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) { diags.Add(1) }),
		replace, middleware.Recover)
	mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithFallbackLogger(logger))
	cs := connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, shape := range encShapes {
		diags.Store(0)
		secret := secretFor(i)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: failArgs{Shape: shape, ID: i}})
		require.NoError(t, err, shape)
		require.True(t, res.IsError, shape)
		require.Equal(t, errs.GenericMessage, text(res), shape)
		require.NotContains(t, jsonOf(t, res), canary, shape)
		got := rows.take()
		require.Len(t, got, 1, shape)
		require.NotEqual(t, audit.OutcomeOK, got[0].Outcome, "%s: the row tells what the client got: %+v", shape, got[0])
		require.Equal(t, errs.CodeInternal, got[0].Code, shape)
		require.Equal(t, int32(1), diags.Load(), "%s: diagnostics reports it", shape)
		if shape == "enc_goexit" {
			require.Contains(t, got[0].Message, "Goexit", shape)
			continue
		}
		require.Contains(t, got[0].Message, "cannot be encoded", "%s: the encoder's error is the row's message", shape)
		if shape == "enc_marshal_err" {
			require.Contains(t, got[0].Message, secret, "%s: the row names the cause", shape)
		}
	}
	require.NotContains(t, logs.String(), "cannot be encoded", "the hooks saw every failure: the adapter has nothing left to log")

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: failArgs{Shape: "counted"}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	require.JSONEq(t, `{"c":"counted"}`, jsonOf(t, res.StructuredContent))
	require.Equal(t, int32(1), encodings.Load(), "the hooks' check and the answer share one encoding")
	got := rows.take()
	require.Len(t, got, 1)
	require.Equal(t, audit.OutcomeOK, got[0].Outcome)
}
