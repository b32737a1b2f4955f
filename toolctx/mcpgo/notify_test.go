package mcpgo_test

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577), still served: these tests check toolctx.Log through it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// heard records the notifications an mcp-go client received, as JSON
// objects of their params.
type heard struct {
	mu       sync.Mutex
	progress []map[string]any
	logs     []map[string]any
}

func listen(c *client.Client) *heard {
	h := &heard{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		b, err := json.Marshal(n.Params)
		if err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		switch n.Method {
		case string(mcp.MethodNotificationProgress):
			h.progress = append(h.progress, m)
		case string(mcp.MethodNotificationMessage):
			h.logs = append(h.logs, m)
		}
	})
	return h
}

func (h *heard) snapshot() (progress, logs []map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.progress...), append([]map[string]any(nil), h.logs...)
}

// wait polls until pred holds for what h heard, or fails after a generous
// bound: mcp-go queues notifications on the session's channel, and they may
// reach the client after the response.
func (h *heard) wait(t *testing.T, what string, pred func(progress, logs []map[string]any) bool) ([]map[string]any, []map[string]any) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, l := h.snapshot()
		if pred(p, l) {
			return p, l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never arrived; heard progress %v, logs %v", what, p, l)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type notifyArgs struct {
	Steps  int    `json:"steps,omitempty"`
	Canary string `json:"canary,omitempty"`
	Fail   bool   `json:"fail,omitempty"`
}

type notifyOut struct {
	Refused []string `json:"refused"`
	Errors  []string `json:"errors"`
}

// delivered maps a test's canary to a function that returns once its
// client has heard step n's progress and log. notifyTool waits on it after
// each step of the call that asks for notifications: mcp-go v1.2.1's
// streamable HTTP server drops a notification its per-request forwarder has
// taken off the channel when the request ends before the forwarder writes
// it (README), so the test lets each one arrive before going on.
var delivered sync.Map

// notifyTool reports Steps steps of progress and logs at debug and info
// levels; it tries two things the notifier refuses (an error as log data,
// a progress that does not increase), and fails with a raw error holding
// the canary when asked.
func notifyTool(ctx context.Context, _ *toolctx.Request, in notifyArgs) (notifyOut, error) {
	var out notifyOut
	if err := toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogError, Data: []any{errors.New("dial " + in.Canary)}}); err != nil {
		out.Refused = append(out.Refused, "error data")
	}
	if err := toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogDebug, Logger: "notify", Data: "debug " + in.Canary[:3]}); err != nil {
		out.Errors = append(out.Errors, err.Error())
	}
	for i := 1; i <= in.Steps; i++ {
		if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d of %d", i, in.Steps)}); err != nil {
			out.Errors = append(out.Errors, err.Error())
		}
		if err := toolctx.Log(ctx, toolctx.LogOptions{Logger: "notify", Data: map[string]any{"step": i}}); err != nil {
			out.Errors = append(out.Errors, err.Error())
		}
		if wait, ok := delivered.Load(in.Canary); ok && in.Fail {
			wait.(func(int))(i) // until the client has step i's two notifications
		}
	}
	if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}); err != nil {
		out.Refused = append(out.Refused, "not increasing")
	}
	if in.Fail {
		return out, errors.New("backend said " + in.Canary)
	}
	return out, nil
}

func notifyServer(t *testing.T) *server.MCPServer {
	s := server.NewMCPServer("notify", "1.0.0", mcpgo.ServerOption(middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.Recover).Middleware()), server.WithLogging())
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("notify"), toolctx.Typed(notifyTool)), "AddTool")
	return s
}

func callWith(t *testing.T, w *wire, name string, args map[string]any, meta *mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	req.Params.Meta = meta
	res, err := w.client.CallTool(ctx, req)
	require.NoError(t, err, "%s: call %s", w.name, name)
	return res
}

// A toolmw handler's progress and log messages reach the mcp-go client on
// every mcp-go transport: progress only when the client gave a progress
// token, logs at the level the client set and above, in order, and nothing
// toolmw adds: no raw cause (the canary) is in any byte the client received.
func TestNotifyEveryTransport(t *testing.T) {
	wires := []*wire{
		inProcessWire(t, notifyServer(t)),
		// Stateless: on a stateful session mcp-go v1.2.1 can also drop a
		// call's first notification: the previous request's forwarder, still
		// winding down, takes it off the session's shared channel and drops
		// it (README, "Progress and log messages").
		httpWire(t, notifyServer(t), nil, server.WithStateLess(true)),
		sseWire(t, notifyServer(t)),
		stdioWire(t, notifyServer(t)),
	}
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			h := listen(w.client)
			canary := "CANARY-notify-" + w.name
			delivered.Store(canary, func(n int) {
				deadline := time.Now().Add(10 * time.Second)
				for time.Now().Before(deadline) {
					if p, l := h.snapshot(); len(p) >= n && len(l) >= n {
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
			})
			defer delivered.Delete(canary)

			// No progress token, no level set: no progress, and info logs
			// are below the level mcp-go starts a session with (error) or
			// assumes for a request that gave none.
			res := callWith(t, w, "notify", map[string]any{"steps": 3, "canary": canary}, nil)
			require.False(t, res.IsError, "the call succeeds: %s", text(res))
			assert.JSONEq(t, `{"refused":["error data","not increasing"],"errors":null}`, text(res),
				"the handler's notifications were accepted, and the two invalid ones refused")

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req := mcp.SetLevelRequest{}
			req.Params.Level = mcp.LoggingLevelInfo
			require.NoError(t, w.client.SetLevel(ctx, req), "set the log level")

			token := "tok-" + w.name
			res = callWith(t, w, "notify", map[string]any{"steps": 3, "canary": canary, "fail": true}, &mcp.Meta{ProgressToken: token})
			require.True(t, res.IsError, "the raw failure is an isError result")
			assert.Equal(t, errs.GenericMessage, text(res), "with the generic message")

			progress, logs := h.wait(t, "three progress notifications and three info logs", func(p, l []map[string]any) bool { return len(p) >= 3 && len(l) >= 3 })
			require.Len(t, progress, 3, "one notification per step of the call with a token, none of the call without")
			for i, p := range progress {
				assert.Equal(t, token, p["progressToken"], "the client's token")
				assert.Equal(t, float64(i+1), p["progress"], "in order")
				assert.Equal(t, float64(3), p["total"], "the total")
				assert.Equal(t, fmt.Sprintf("step %d of 3", i+1), p["message"], "the handler's message")
			}
			require.Len(t, logs, 3, "the info logs after the level was set; no debug log")
			for i, l := range logs {
				assert.Equal(t, "info", l["level"], "an empty level is info")
				assert.Equal(t, "notify", l["logger"], "the logger name")
				assert.Equal(t, map[string]any{"step": float64(i + 1)}, l["data"], "the handler's data, as given")
			}
			assert.NotContains(t, string(w.bytes()), "CANARY", "no raw cause in anything the client received")
		})
	}
}

// After the call has returned, its notifier sends nothing: a goroutine the
// handler left behind gets toolctx.ErrCallEnded; and a tool registered with
// mcpgo.AddTool on a server without the adapter gets a Notifier too.
func TestNotifyAfterTheCall(t *testing.T) {
	for _, withAdapter := range []bool{true, false} {
		t.Run(fmt.Sprintf("adapter=%v", withAdapter), func(t *testing.T) {
			var opts []server.ServerOption
			if withAdapter {
				opts = append(opts, mcpgo.ServerOption(middleware.New(middleware.Recover).Middleware()))
			}
			s := server.NewMCPServer("late", "1.0.0", opts...)
			kept := make(chan context.Context, 1)
			require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("keep"), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
				if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1, Message: "in the call"}); err != nil {
					return toolctx.ErrorResult(err)
				}
				kept <- ctx
				return toolctx.TextResult("ok")
			})), "AddTool")
			w := inProcessWire(t, s)
			h := listen(w.client)
			res := callWith(t, w, "keep", nil, &mcp.Meta{ProgressToken: "t1"})
			require.False(t, res.IsError, "the call succeeds: %s", text(res))
			ctx := <-kept
			assert.ErrorIs(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 2}), toolctx.ErrCallEnded, "no progress after the call")
			assert.ErrorIs(t, toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogEmergency, Data: "late"}), toolctx.ErrCallEnded, "no log after the call")

			// A second call's notification proves the late ones were never
			// sent: the session's notifications arrive in order.
			res = callWith(t, w, "keep", nil, &mcp.Meta{ProgressToken: "t2"})
			require.False(t, res.IsError, "the second call succeeds: %s", text(res))
			<-kept
			progress, logs := h.wait(t, "both calls' progress", func(p, _ []map[string]any) bool { return len(p) >= 2 })
			require.Len(t, progress, 2, "one notification per call, none late")
			assert.Equal(t, "t1", progress[0]["progressToken"], "the first call's")
			assert.Equal(t, "t2", progress[1]["progressToken"], "the second call's")
			assert.Empty(t, logs, "no late log")
		})
	}
}

// middleware.ProgressTimeout through the mcp-go adapter: the handler's
// progress, sent to the in-process client, moves the deadline (1.5s under a
// 500ms idle deadline succeeds), and a maximum still holds (1s).
func TestProgressTimeoutThroughMCPGo(t *testing.T) {
	report := func(ctx context.Context, until time.Duration) *toolctx.CallResult {
		start := time.Now()
		for i := 1; time.Since(start) < until; i++ {
			if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i)}); err != nil {
				return toolctx.ErrorResult(err)
			}
			select {
			case <-ctx.Done():
				return toolctx.ErrorResult(ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
		return toolctx.TextResult("done")
	}
	s := server.NewMCPServer("pt", "1.0.0", mcpgo.ServerOption(middleware.New(
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.When(middleware.Tools("long"), middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{Idle: 500 * time.Millisecond, Max: time.Minute})),
		middleware.When(middleware.Tools("forever"), middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{Idle: 500 * time.Millisecond, Max: time.Second})),
	).Middleware()))
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("long"), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		return report(ctx, 1500*time.Millisecond)
	})), "AddTool")
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("forever"), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		return report(ctx, time.Hour)
	})), "AddTool")
	w := inProcessWire(t, s)
	h := listen(w.client)
	res := callWith(t, w, "long", nil, &mcp.Meta{ProgressToken: "long"})
	require.False(t, res.IsError, "1.5s with progress under a 500ms idle deadline: %s", text(res))
	h.wait(t, "the long call's progress", func(p, _ []map[string]any) bool { return len(p) > 3 })
	res = callWith(t, w, "forever", nil, nil)
	require.True(t, res.IsError, "stopped")
	assert.Equal(t, "the tool call timed out after 1s", text(res), "by the maximum")
}
