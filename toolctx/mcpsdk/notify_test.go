package mcpsdk_test

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577), still served: these tests check toolctx.Log through it.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// heard records the notifications a client received.
type heard struct {
	mu       sync.Mutex
	progress []mcp.ProgressNotificationParams
	logs     []mcp.LoggingMessageParams
}

// client is a go-sdk client whose notifications h records.
func (h *heard) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.progress = append(h.progress, *r.Params)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.logs = append(h.logs, *r.Params)
		},
	})
}

func (h *heard) snapshot() ([]mcp.ProgressNotificationParams, []mcp.LoggingMessageParams) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]mcp.ProgressNotificationParams(nil), h.progress...), append([]mcp.LoggingMessageParams(nil), h.logs...)
}

// wait polls until pred holds for what h heard, or fails after a generous
// bound: notifications may reach the client's handler after the response.
func (h *heard) wait(t *testing.T, what string, pred func([]mcp.ProgressNotificationParams, []mcp.LoggingMessageParams) bool) ([]mcp.ProgressNotificationParams, []mcp.LoggingMessageParams) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, l := h.snapshot()
		if pred(p, l) {
			return p, l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never arrived; heard progress %+v, logs %+v", what, p, l)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type notifyArgs struct {
	Steps int  `json:"steps,omitempty"`
	ID    int  `json:"id,omitempty"`
	Fail  bool `json:"fail,omitempty"`
}

type notifyOut struct {
	Refused []string `json:"refused"`
	Errors  []string `json:"errors"`
}

// notifyTool reports Steps steps of progress and logs at debug and info
// levels; it tries two things the notifier refuses (an error as log data,
// a progress that does not increase), and fails with a raw error holding
// the call's secret when asked.
func notifyTool(ctx context.Context, _ *toolctx.Request, in notifyArgs) (notifyOut, error) {
	var out notifyOut
	secret := secretFor(in.ID)
	if err := toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogError, Data: map[string]any{"cause": errors.New("dial " + secret)}}); err != nil {
		out.Refused = append(out.Refused, "error data")
	}
	if err := toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogDebug, Logger: "notify", Data: fmt.Sprintf("debug %d", in.ID)}); err != nil {
		out.Errors = append(out.Errors, err.Error())
	}
	for i := 1; i <= in.Steps; i++ {
		if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d of %d", i, in.Steps)}); err != nil {
			out.Errors = append(out.Errors, err.Error())
		}
		if err := toolctx.Log(ctx, toolctx.LogOptions{Logger: "notify", Data: map[string]any{"id": in.ID, "step": i}}); err != nil {
			out.Errors = append(out.Errors, err.Error())
		}
	}
	if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}); err != nil {
		out.Refused = append(out.Refused, "not increasing")
	}
	if in.Fail {
		return out, errors.New("backend said " + secret)
	}
	return out, nil
}

// A toolmw handler's progress and log messages reach the go-sdk client on
// every transport: progress only when the client gave a progress token,
// logs at the level the client asked for and above, in order, and nothing
// toolmw adds: no raw cause (the failing call's secret) is in any byte the
// client received.
func TestNotifyEveryTransport(t *testing.T) {
	for ti, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			f := tk.connect(t)
			ctx := context.Background()
			quiet, loud := 9100+2*ti, 9101+2*ti

			// No progress token and no log level: nothing is sent.
			res, err := f.session.CallTool(ctx, &mcp.CallToolParams{Name: "notify", Arguments: map[string]any{"steps": 3, "id": quiet}})
			require.NoError(t, err, "call without a token")
			require.False(t, res.IsError, "the call succeeds: %s", text(res))
			assert.JSONEq(t, `{"refused":["error data","not increasing"],"errors":null}`, jsonOf(t, res.StructuredContent),
				"the handler's notifications were accepted, and the two invalid ones refused")

			setLogLevel(t, f.session, "info")
			token := "tok-" + tk.name
			res, err = f.session.CallTool(ctx, &mcp.CallToolParams{Name: "notify", Arguments: map[string]any{"steps": 3, "id": loud, "fail": true},
				Meta: mcp.Meta{"progressToken": token, mcp.MetaKeyLogLevel: "info"}})
			require.NoError(t, err, "call with a token")
			require.True(t, res.IsError, "the raw failure is an isError result")
			assert.Equal(t, errs.GenericMessage, text(res), "with the generic message")

			progress, logs := f.heard.wait(t, "three progress notifications and three info logs", func(p []mcp.ProgressNotificationParams, l []mcp.LoggingMessageParams) bool {
				return len(p) >= 3 && len(l) >= 3
			})
			require.Len(t, progress, 3, "one notification per step of the call with a token, none of the call without")
			for i, p := range progress {
				assert.Equal(t, token, p.ProgressToken, "the client's token")
				assert.Equal(t, float64(i+1), p.Progress, "in order")
				assert.Equal(t, float64(3), p.Total, "the total")
				assert.Equal(t, fmt.Sprintf("step %d of 3", i+1), p.Message, "the handler's message")
			}
			require.Len(t, logs, 3, "the info logs of the call that asked for info; no debug log, none of the call without a level")
			for i, l := range logs {
				assert.Equal(t, mcp.LoggingLevel("info"), l.Level, "an empty level is info")
				assert.Equal(t, "notify", l.Logger, "the logger name")
				assert.JSONEq(t, fmt.Sprintf(`{"id":%d,"step":%d}`, loud, i+1), jsonOf(t, l.Data), "the handler's data, as given")
			}
			got := string(f.received.bytes())
			for _, id := range []int{quiet, loud} {
				assert.NotContains(t, got, secretFor(id), "no raw cause in anything the client received")
			}
		})
	}
}

// After the call has returned, its notifier sends nothing: a goroutine the
// handler left behind gets toolctx.ErrCallEnded. While the call runs, a
// handler whose context ended gets its error, and nothing is sent.
func TestNotifyAfterTheCall(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	kept := make(chan context.Context, 1)
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "keep", InputSchema: map[string]any{"type": "object"}}, toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		kept <- ctx
		return toolctx.TextResult("ok")
	})))
	mcpsdk.Install(s, middleware.New(middleware.Recover).Middleware())
	hd := &heard{}
	cs := connectPipe(t, s, hd)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "keep", Meta: mcp.Meta{"progressToken": "t1", mcp.MetaKeyLogLevel: "debug"}})
	require.NoError(t, err, "call")
	ctx := <-kept
	assert.ErrorIs(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}), toolctx.ErrCallEnded, "no progress after the call")
	assert.ErrorIs(t, toolctx.Log(ctx, toolctx.LogOptions{Data: "late"}), toolctx.ErrCallEnded, "no log after the call")

	// A marker call proves the late ones were never sent: notifications
	// of one session arrive in order.
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "mark", InputSchema: map[string]any{"type": "object"}}, toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 7}); err != nil {
			return toolctx.ErrorResult(err)
		}
		return toolctx.TextResult("marked")
	})))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mark", Meta: mcp.Meta{"progressToken": "t2"}})
	require.NoError(t, err, "marker call")
	require.False(t, res.IsError, "marker: %s", text(res))
	progress, logs := hd.wait(t, "the marker", func(p []mcp.ProgressNotificationParams, _ []mcp.LoggingMessageParams) bool { return len(p) >= 1 })
	assert.Equal(t, []mcp.ProgressNotificationParams{{ProgressToken: "t2", Progress: 7}}, progress, "only the marker's progress")
	assert.Empty(t, logs, "no late log")
}

// A tool registered with mcpsdk.AddTool on a server without the adapter's
// middleware gets a Notifier too.
func TestNotifyWithoutInstall(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	must(mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "notify"}, notifyTool))
	hd := &heard{}
	cs := connectPipe(t, s, hd)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notify", Arguments: map[string]any{"steps": 2, "id": 1},
		Meta: mcp.Meta{"progressToken": 5, mcp.MetaKeyLogLevel: "warning"}})
	require.NoError(t, err, "call")
	require.False(t, res.IsError, "the call succeeds: %s", text(res))
	progress, logs := hd.wait(t, "two progress notifications", func(p []mcp.ProgressNotificationParams, _ []mcp.LoggingMessageParams) bool { return len(p) >= 2 })
	require.Len(t, progress, 2, "both steps")
	assert.EqualValues(t, 5, progress[1].ProgressToken, "a numeric token comes back as sent")
	assert.Empty(t, logs, "info logs are below the warning level the call asked for")
}

// setLogLevel asks for log messages at level and above: with
// logging/setLevel on a session of a protocol before 2026-07-28 (SSE,
// stateful streamable HTTP here), which removed it for the per-request
// level the calls send in their _meta (mcp.MetaKeyLogLevel).
func setLogLevel(t *testing.T, cs *mcp.ClientSession, level mcp.LoggingLevel) {
	t.Helper()
	if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		return
	}
	require.NoError(t, cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: level}), "logging/setLevel")
}

// connectPipe connects a go-sdk client to s in memory; hd records its
// notifications.
func connectPipe(t *testing.T, s *mcp.Server, hd *heard) *mcp.ClientSession {
	t.Helper()
	c1, c2 := net.Pipe()
	ss, err := s.Connect(context.Background(), &mcp.IOTransport{Reader: c1, Writer: c1}, nil)
	require.NoError(t, err, "server connect")
	cs, err := hd.client().Connect(context.Background(), &mcp.IOTransport{Reader: c2, Writer: c2}, nil)
	require.NoError(t, err, "client connect")
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}
