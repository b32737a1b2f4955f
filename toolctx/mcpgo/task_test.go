package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// taskServer is a server with task support whose task tool "task_fail"
// fails in each of failure's shapes, and "task_ok" succeeds, both
// registered with mcpgo.AddTaskTool under rec's chain.
func taskServer(t testing.TB, rec *recorder) *server.MCPServer {
	s := server.NewMCPServer("toolmw-test", "1.0.0",
		mcpgo.ServerOption(rec.chain().Middleware()),
		server.WithTaskCapabilities(true, true, true),
	)
	fail := mcp.NewTool("task_fail", failSchema, mcp.WithTaskSupport(mcp.TaskSupportRequired))
	require.NoError(t, mcpgo.AddTaskTool(s, fail, rec.chain().Middleware(),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			k, c := failArgs(req)
			return nil, failure(k, c)
		}))
	// The hybrid mode: an ordinary tool that supports tasks, which mcp-go
	// runs through the tool middleware.
	s.AddTool(mcp.NewTool("hybrid_fail", failSchema, mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			k, c := failArgs(req)
			return nil, failure(k, c)
		})
	ok := mcp.NewTool("task_ok", mcp.WithTaskSupport(mcp.TaskSupportRequired))
	require.NoError(t, mcpgo.AddTaskTool(s, ok, rec.chain().Middleware(),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			return &mcp.CreateTaskResult{Content: []mcp.Content{mcp.NewTextContent("done")}}, nil
		}))
	return s
}

// runTask calls name as a task through w's client, waits for the task to
// end and returns its final state (tasks/get) and result (tasks/result).
// taskCalls numbers the test's own JSON-RPC ids, far from the client's.
var taskCalls int64

func runTask(t *testing.T, w *wire, legacy bool, name string, args map[string]any) (*mcp.GetTaskResult, *mcp.TaskResultResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// mcp-go's client has no call for a task-augmented tools/call (its
	// CallTool cannot parse the task it gets back): send one through its
	// transport.
	var params mcp.CallToolParams
	params.Name = name
	params.Arguments = args
	params.Task = &mcp.TaskParams{}
	if !legacy {
		// What mcp-go's client adds to every request of protocol
		// 2026-07-28.
		params.Meta = &mcp.Meta{AdditionalFields: map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.LATEST_PROTOCOL_VERSION,
			mcp.MetaKeyClientCapabilities: map[string]any{},
			mcp.MetaKeyClientInfo:         map[string]any{"name": "toolmw-test", "version": "1"},
		}}
	}
	taskCalls++
	resp, err := w.client.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(1_000_000 + taskCalls)), Method: string(mcp.MethodToolsCall), Params: params,
		Header: http.Header{mcp.HeaderMethod: {string(mcp.MethodToolsCall)}, mcp.HeaderName: {name}},
	})
	require.NoError(t, err, "the task-augmented tools/call is sent")
	require.Nil(t, resp.Error, "the task-augmented tools/call is accepted")
	var created mcp.CreateTaskResult
	require.NoError(t, json.Unmarshal(resp.Result, &created))
	id := created.Task.TaskId
	require.NotEmpty(t, id, "the answer is a task handle")
	get := mcp.GetTaskRequest{}
	get.Params.TaskId = id
	final, err := w.client.WaitForTask(ctx, get, 5*time.Millisecond)
	require.NoError(t, err)
	if !legacy {
		// Protocol 2026-07-28 has no tasks/result (mcp-go answers
		// "method not found"): tasks/get is all the client has.
		return final, nil, nil
	}
	rr := mcp.TaskResultRequest{}
	rr.Params.TaskId = id
	res, err := w.client.TaskResult(ctx, rr)
	return final, res, err
}

// legacyInProcessWire is inProcessWire with a client of protocol 2025-11-25,
// which has tasks/result.
func legacyInProcessWire(t testing.TB, s *server.MCPServer) *wire {
	w := &wire{name: "in-process-2025-11-25"}
	w.client = client.NewClient(&captureTransport{Interface: transport.NewInProcessTransport(s), w: w},
		client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	initialize(t, w.client)
	t.Cleanup(func() { _ = w.client.Close() })
	return w
}

// TestTaskToolNeverLeaks is the one rule on mcp-go's task tools: mcp-go runs
// a task handler without tool middleware and sends its error's text or its
// panic value in tasks/get's statusMessage and in tasks/result's JSON-RPC
// error. Registered with mcpgo.AddTaskTool, every failure shape is the
// public result on every transport, and the row (one per task, naming it)
// keeps the cause.
func TestTaskToolNeverLeaks(t *testing.T) {
	transports := map[string]func(testing.TB, *server.MCPServer) *wire{
		"in-process":            func(t testing.TB, s *server.MCPServer) *wire { return inProcessWire(t, s) },
		"in-process-2025-11-25": legacyInProcessWire,
		"stdio":                 func(t testing.TB, s *server.MCPServer) *wire { return stdioWire(t, s) },
		"sse":                   sseWire,
		"streamable-http":       func(t testing.TB, s *server.MCPServer) *wire { return httpWire(t, s, nil) },
	}
	for name, mk := range transports {
		legacy := strings.HasSuffix(name, "2025-11-25")
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			w := mk(t, taskServer(t, rec))
			for _, tool := range []string{"task_fail", "hybrid_fail"} {
				for kind := range numKinds {
					canary := fmt.Sprintf("CANARY-%s-%s-%d", tool, name, kind)
					rec.reset()
					before := len(w.bytes())
					final, res, err := runTask(t, w, legacy, tool, map[string]any{"kind": kind, "canary": canary})
					require.NoError(t, err, "kind %d: tasks/result answers with the tool's result, not a JSON-RPC error", kind)
					assert.Equal(t, mcp.TaskStatusCompleted, final.Status, "kind %d: a tool failure is a completed task with an isError result", kind)
					assert.NotContains(t, final.StatusMessage, canary, "kind %d: tasks/get", kind)
					if legacy {
						require.NotNil(t, res)
						assert.True(t, res.IsError, "kind %d", kind)
						got := taskText(res)
						assert.NotContains(t, got, canary, "kind %d: tasks/result", kind)
						if !publicKind(kind) {
							assert.Equal(t, errs.GenericMessage, got, "kind %d: the generic message", kind)
						}
					}
					assert.False(t, bytes.Contains(w.bytes()[before:], []byte(canary)), "kind %d: the canary is nowhere on the wire", kind)
					require.Eventually(t, func() bool { _, rows, _ := rec.snapshot(); return len(rows) == 1 }, 10*time.Second, time.Millisecond,
						"kind %d: one row for the task's execution", kind)
					_, rows, reqs := rec.snapshot()
					assert.True(t, rows[0].Outcome.Failed, "kind %d", kind)
					require.Len(t, reqs, 1)
					assert.Equal(t, final.TaskId, reqs[0].TaskID, "kind %d: the row names the task", kind)
					assert.Equal(t, final.TaskId, rows[0].Details.TaskID(), "kind %d", kind)
					if canaryInValue(kind) && !publicKind(kind) {
						assert.Contains(t, errs.Describe(rows[0].Cause()), canary, "kind %d: the row keeps the cause", kind)
					}
				}
			}
			rec.reset()
			final, res, err := runTask(t, w, legacy, "task_ok", nil)
			require.NoError(t, err)
			assert.Equal(t, mcp.TaskStatusCompleted, final.Status)
			if legacy {
				assert.False(t, res.IsError)
				assert.Equal(t, "done", taskText(res), "a success is stored as the handler returned it")
			}
		})
	}
}

// TestAddTaskToolChecks: construction mistakes are errors, and nothing is
// registered.
func TestAddTaskToolChecks(t *testing.T) {
	h := func(context.Context, mcp.CallToolRequest) (*mcp.CreateTaskResult, error) { return nil, nil }
	s := server.NewMCPServer("t", "1", server.WithTaskCapabilities(true, true, true))
	assert.ErrorIs(t, mcpgo.AddTaskTool(nil, mcp.NewTool("x"), nil, h), mcpgo.ErrNilServer, "a nil server")
	assert.ErrorIs(t, mcpgo.AddTaskTool(s, mcp.NewTool("x"), nil, nil), toolctx.ErrNilHandler, "a nil handler")
	var nameErr *errs.ToolNameError
	assert.True(t, errors.As(mcpgo.AddTaskTool(s, mcp.NewTool("bad name!"), nil, h), &nameErr), "a bad name")
	s.AddTool(mcp.NewTool("plain"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	var schemaErr *errs.ToolSchemaError
	assert.True(t, errors.As(mcpgo.AddTaskTool(s, mcp.NewTool("plain"), nil, h), &schemaErr), "a name mcp-go refuses (an ordinary tool's)")
}

func taskText(r *mcp.TaskResultResult) string {
	return text(&mcp.CallToolResult{Content: r.Content})
}

// TestTaskOutlivesItsRequest: mcp-go cancels the context of a task's
// execution as soon as it has answered the tools/call with the task, so a
// task that waits on its context would end as canceled. Under AddTaskTool
// the task runs on until it is done, and tasks/cancel still ends it.
func TestTaskOutlivesItsRequest(t *testing.T) {
	for _, tool := range []string{"task_wait", "hybrid_wait"} {
		t.Run(tool, func(t *testing.T) { taskOutlivesItsRequest(t, tool) })
	}
}

func taskOutlivesItsRequest(t *testing.T, tool string) {
	rec := &recorder{}
	var mu sync.Mutex
	release := make(chan struct{})
	wait := func(ctx context.Context) error {
		mu.Lock()
		r := release
		mu.Unlock()
		select {
		case <-r:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s := server.NewMCPServer("toolmw-test", "1.0.0",
		mcpgo.ServerOption(rec.chain().Middleware()),
		server.WithTaskCapabilities(true, true, true),
	)
	require.NoError(t, mcpgo.AddTaskTool(s, mcp.NewTool("task_wait", mcp.WithTaskSupport(mcp.TaskSupportRequired)), rec.chain().Middleware(),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
			if err := wait(ctx); err != nil {
				return nil, err
			}
			return &mcp.CreateTaskResult{Content: []mcp.Content{mcp.NewTextContent("done")}}, nil
		}))
	s.AddTool(mcp.NewTool("hybrid_wait", mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := wait(ctx); err != nil {
				return nil, err
			}
			return mcp.NewToolResultText("done"), nil
		})
	w := legacyInProcessWire(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := func() string {
		var params mcp.CallToolParams
		params.Name = tool
		params.Task = &mcp.TaskParams{}
		taskCalls++
		resp, err := w.client.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(1_000_000 + taskCalls)), Method: string(mcp.MethodToolsCall), Params: params,
		})
		require.NoError(t, err)
		var created mcp.CreateTaskResult
		require.NoError(t, json.Unmarshal(resp.Result, &created))
		require.NotEmpty(t, created.Task.TaskId)
		return created.Task.TaskId
	}

	// When the in-process tools/call has returned, mcp-go has cancelled its
	// context, from which the task's derives.
	id := start()
	require.Eventually(t, func() bool { _, _, reqs := rec.snapshot(); return len(reqs) == 1 }, 10*time.Second, time.Millisecond, "the task's execution entered the chain")
	close(release)
	rr := mcp.TaskResultRequest{}
	rr.Params.TaskId = id
	res, err := w.client.TaskResult(ctx, rr)
	require.NoError(t, err)
	assert.False(t, res.IsError, "the task was not canceled by the end of its tools/call")
	assert.Equal(t, "done", taskText(res))
	_, rows, _ := rec.snapshot()
	require.Len(t, rows, 1)
	assert.Equal(t, id, rows[0].Details.TaskID(), "the row names the task")

	mu.Lock()
	release = make(chan struct{}) // never closed: only tasks/cancel ends the next task
	mu.Unlock()
	rec.reset()
	id = start()
	require.Eventually(t, func() bool { _, _, reqs := rec.snapshot(); return len(reqs) == 1 }, 10*time.Second, time.Millisecond)
	cr := mcp.CancelTaskRequest{}
	cr.Params.TaskId = id
	_, err = w.client.CancelTask(ctx, cr)
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, rows, _ := rec.snapshot(); return len(rows) == 1 }, 10*time.Second, time.Millisecond, "tasks/cancel ends the task's execution")
	_, rows, _ = rec.snapshot()
	assert.Equal(t, errs.CodeCanceled, rows[0].Outcome.Public.Code, "the row of a canceled task")
	assert.Equal(t, id, rows[0].Details.TaskID())
}
