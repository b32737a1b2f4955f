package mcpgo

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// ErrNilServer is returned by [AddTaskTool] for a nil server.
var ErrNilServer = errors.New("mcpgo: AddTaskTool needs a non-nil server")

// AddTaskTool registers h as the task tool described by tool on s (mcp-go's
// (*server.MCPServer).AddTaskTool), with m run around every execution of
// the task: mcp-go runs a task tool without any tool middleware and sends
// its error text or panic value to the client. Here the chain sees the
// execution as one call, whose Request carries the task's id, learnt
// through hooks AddTaskTool adds to the server's (give server.WithHooks
// before); a failure completes the task with the normalized isError result
// an ordinary call gets; the execution runs detached from the tools/call
// that created it, and tasks/cancel cancels it. h's result is read for its
// Content, StructuredContent, IsError and _meta. The tool is checked as
// [AddTool] checks it; a nil s is [ErrNilServer], a nil h an error wrapping
// [toolctx.ErrNilHandler]. A tool whose Execution.TaskSupport allows tasks
// needs no AddTaskTool behind [ServerOption]. See docs/adapters/mcpgo.md,
// "Multi-round-trip requests and tasks".
func AddTaskTool(s *server.MCPServer, tool mcp.Tool, m toolctx.Middleware, h server.TaskToolHandlerFunc, opts ...Option) (err error) {
	if s == nil {
		return ErrNilServer
	}
	cfg, err := adapter.NewToolConfig(adapterName, "mcpgo.AddTaskTool", tool.Name, h == nil, opts...)
	if err != nil {
		return err
	}
	if _, err := checkSchemas(&tool); err != nil {
		return err
	}
	e := newEngine(m, cfg)
	name := tool.Name
	links := &taskLinks{match: func(_ context.Context, r *mcp.CallToolRequest) bool { return r.Params.Name == name }}
	if err := adapter.Register("mcp-go", tool.Name, func() { s.AddTaskTool(tool, e.taskHandler(h, links)) }); err != nil {
		return err
	}
	links.install(hooksOf(s), s)
	return nil
}

// hooksOf returns s's hooks, giving s hooks first if it has none.
func hooksOf(s *server.MCPServer) *server.Hooks {
	h := s.GetHooks()
	if h == nil {
		h = &server.Hooks{}
		server.WithHooks(h)(s)
	}
	return h
}

func (e *engine) taskHandler(h server.TaskToolHandlerFunc, links *taskLinks) server.TaskToolHandlerFunc {
	next := func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, err := h(ctx, request)
		if err != nil || r == nil {
			return nil, err
		}
		return &mcp.CallToolResult{Result: r.Result, Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError}, nil
	}
	return func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		ctx, id, end := links.Begin(ctx, request.Params.Task)
		defer end()
		// No sender: mcp-go's context of the tools/call has ended.
		out := e.serve(ctx, &call{e: e, mreq: request, next: next}, id)
		return &mcp.CreateTaskResult{Result: out.Result, Content: out.Content, StructuredContent: out.StructuredContent, IsError: out.IsError}, nil
	}
}

// taskLinks tells a task's execution the id mcp-go gave the task, through
// hooks that share the request's *mcp.TaskParams pointer with the
// execution (docs/adapters/mcpgo.md).
type taskLinks struct {
	adapter.Tasks[*mcp.TaskParams]
	match func(context.Context, *mcp.CallToolRequest) bool // the task calls this serves
}

func (l *taskLinks) install(h *server.Hooks, s *server.MCPServer) {
	mine := func(ctx context.Context, r *mcp.CallToolRequest) bool {
		return r != nil && r.Params.Task != nil && forServer(ctx, s) && l.match(ctx, r)
	}
	h.AddBeforeCallTool(func(ctx context.Context, _ any, r *mcp.CallToolRequest) {
		if mine(ctx, r) {
			l.Open(r.Params.Task)
		}
	})
	h.AddAfterCallTool(func(ctx context.Context, _ any, r *mcp.CallToolRequest, result any) {
		if !mine(ctx, r) {
			return
		}
		id := ""
		if ct, ok := result.(*mcp.CreateTaskResult); ok && ct != nil {
			id = ct.Task.TaskId
		}
		l.Close(r.Params.Task, id)
	})
	// After mcp-go marked the task cancelled, so the execution cannot end
	// it first as completed.
	h.AddAfterCancelTask(func(ctx context.Context, _ any, r *mcp.CancelTaskRequest, _ *mcp.CancelTaskResult) {
		if r != nil && forServer(ctx, s) {
			l.Cancel(r.Params.TaskId)
		}
	})
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, _ error) {
		if r, ok := message.(*mcp.CallToolRequest); ok && method == mcp.MethodToolsCall && mine(ctx, r) {
			l.Close(r.Params.Task, "")
		}
	})
}

// hybridTask reports whether mcp-go runs r as a task through the tool
// middleware: a tool of s that supports tasks, called with one.
func hybridTask(ctx context.Context, s *server.MCPServer, r *mcp.CallToolRequest) bool {
	if s == nil {
		return false
	}
	t, ok := lookupTool(ctx, s, r.Params.Name)
	if !ok || t.Execution == nil {
		return false
	}
	return t.Execution.TaskSupport == mcp.TaskSupportOptional || t.Execution.TaskSupport == mcp.TaskSupportRequired
}
