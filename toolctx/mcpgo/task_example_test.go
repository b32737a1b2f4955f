package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// A task tool registered with AddTaskTool runs inside the chain: its raw
// error reaches diagnostics, and the task's client sees the public result
// only (s.AddTaskTool would put the error's text in the task's
// statusMessage).
func ExampleAddTaskTool() {
	chain := middleware.New(
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			fmt.Println("server keeps:", ev.Cause(), "task:", ev.Details.TaskID() != "")
		}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	s := server.NewMCPServer("demo", "1.0.0", mcpgo.ServerOption(chain.Middleware()), server.WithTaskCapabilities(true, true, true))
	export := mcp.NewTool("export", mcp.WithTaskSupport(mcp.TaskSupportRequired))
	_ = mcpgo.AddTaskTool(s, export, chain.Middleware(), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		return nil, errors.New("write /srv/exports/acme.csv: disk quota exceeded")
	})

	c := client.NewClient(transport.NewInProcessTransport(s), client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	_, _ = c.Initialize(ctx, mcp.InitializeRequest{})
	// mcp-go's client has no call for a task-augmented tools/call: send it
	// through the transport.
	var params mcp.CallToolParams
	params.Name, params.Task = "export", &mcp.TaskParams{}
	resp, _ := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(100)), Method: "tools/call", Params: params})
	var created mcp.CreateTaskResult
	_ = json.Unmarshal(resp.Result, &created)

	get := mcp.GetTaskRequest{}
	get.Params.TaskId = created.Task.TaskId
	task, _ := c.WaitForTask(ctx, get, 5*time.Millisecond)
	rr := mcp.TaskResultRequest{}
	rr.Params.TaskId = created.Task.TaskId
	res, _ := c.TaskResult(ctx, rr)
	fmt.Printf("client sees: %s %q; isError %v %q\n", task.Status, task.StatusMessage, res.IsError, res.Content[0].(mcp.TextContent).Text)
	// Output:
	// server keeps: write /srv/exports/acme.csv: disk quota exceeded task: true
	// client sees: completed ""; isError true "internal error: the tool failed; the cause was recorded on the server"
}
