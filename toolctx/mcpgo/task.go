package mcpgo

import (
	"context"
	"errors"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// ErrNilServer is returned by [AddTaskTool] for a nil server.
var ErrNilServer = errors.New("mcpgo: AddTaskTool needs a non-nil server")

// AddTaskTool registers h as the task tool described by tool on s (mcp-go's
// (*server.MCPServer).AddTaskTool), with m run around every execution of
// the task. Use it instead of s.AddTaskTool: mcp-go runs a task tool's
// handler without any tool middleware, and puts its Go error's text, or
// its panic value, into the task's statusMessage (tasks/get, tasks/list,
// the notifications/tasks/status notification) and into the JSON-RPC error
// of tasks/result. Registered here, none of that reaches the client:
//
//   - m runs around h inside the task's goroutine, as [Middleware] runs it
//     around an ordinary call, so the chain's hooks (audit, diagnostics)
//     see the task's execution as one call whose result is the task's final
//     outcome, with the raw cause kept on the server;
//   - the Request carries the task's id ([toolctx.Request.TaskID]), learnt
//     from mcp-go's answer to the tools/call through hooks AddTaskTool adds
//     to the server's (creating them if the server has none; give
//     server.WithHooks before, never after, as for [ServerOption]);
//   - a failure (a Go error, a panic, a runtime.Goexit, a nil result) is
//     the normalized public result an ordinary call gets: the task
//     completes with an isError result (the protocol's status for a tool
//     call that returned isError: "completed"), whose content is the public
//     message and whose _meta[toolctx.ErrorMetaKey] has the code; its
//     statusMessage is empty. A success is stored as h returned it;
//   - the task runs detached from the tools/call that created it: mcp-go
//     derives a task's context from that request's, which it cancels as
//     soon as it has answered with the task, so a task that looks at its
//     context would otherwise end as canceled at once. tasks/cancel still
//     cancels it (through a hook), and the row then says canceled.
//
// h's *mcp.CreateTaskResult is read as the tool's result: its Content,
// StructuredContent, IsError and _meta (its Task field is mcp-go's, and
// ignored). Give m the same chain as the server's [ServerOption]. The
// tool's name and schemas are checked as [AddTool] checks them; nothing is
// registered when AddTaskTool returns an error.
//
// The hybrid mode (a tool registered with s.AddTool, or [AddTool], whose
// Execution.TaskSupport is optional or required, called with a task) needs
// no AddTaskTool: mcp-go runs the tool middleware in the task's goroutine,
// and [ServerOption] does for it what AddTaskTool does (the task id, the
// detached context, tasks/cancel). With [Middleware] and [AddHooks]
// installed separately the hybrid mode's failures are scrubbed, but its row
// has no task id and mcp-go's early cancellation of its context applies.
func AddTaskTool(s *server.MCPServer, tool mcp.Tool, m toolctx.Middleware, h server.TaskToolHandlerFunc, opts ...Option) (err error) {
	if s == nil {
		return ErrNilServer
	}
	if h == nil {
		return ErrNilHandler
	}
	if err := errs.CheckToolName(tool.Name); err != nil {
		return err
	}
	if _, err := checkSchemas(&tool); err != nil {
		return err
	}
	e := newEngine(m, opts)
	name := tool.Name
	links := &taskLinks{match: func(_ context.Context, r *mcp.CallToolRequest) bool { return r.Params.Name == name }}
	// mcp-go panics on a name already registered as an ordinary tool and
	// on invalid header annotations: Register reports either as an error.
	if err := adapter.Register("mcp-go", tool.Name, func() { s.AddTaskTool(tool, e.taskHandler(h, links)) }); err != nil {
		return err
	}
	hooks := s.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(s)
	}
	links.install(hooks, s)
	return nil
}

// taskHandler is the mcp-go task handler that runs the chain around h.
func (e *engine) taskHandler(h server.TaskToolHandlerFunc, links *taskLinks) server.TaskToolHandlerFunc {
	next := func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, err := h(ctx, request)
		if err != nil || r == nil {
			return nil, err
		}
		return &mcp.CallToolResult{Result: r.Result, Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError}, nil
	}
	return func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		ctx, id, end := links.begin(ctx, request.Params.Task)
		defer end()
		// The task's notifications are not sent: the sender has no
		// context (mcp-go's has ended with the tools/call).
		out := e.serve(ctx, &call{e: e, mreq: request, next: next}, id)
		return &mcp.CreateTaskResult{Result: out.Result, Content: out.Content, StructuredContent: out.StructuredContent, IsError: out.IsError}, nil
	}
}

// begin returns the context the task whose params are key runs in and its
// id, or ctx and "" when no hook saw the task made; call end when the
// task's execution ends. mcp-go derives a task's context from the
// tools/call's, which it cancels as soon as it has answered with the task:
// left so, every task that looks at its context would end as canceled. A
// task whose id is known runs detached from that request, and tasks/cancel
// (a hook) cancels it.
func (l *taskLinks) begin(ctx context.Context, key *mcp.TaskParams) (context.Context, string, func()) {
	id := l.wait(ctx, key)
	if id == "" {
		return ctx, "", func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancels.Store(id, cancel)
	return ctx, id, func() {
		l.cancels.Delete(id)
		cancel()
	}
}

// taskLinks tells a task's execution the id mcp-go gave the task. mcp-go
// creates the task, starts the handler's goroutine and answers the
// tools/call with the task, all before any hook or middleware sees the
// task's id; the handler is never told. What the handler's request shares
// with the request the hooks see is the *mcp.TaskParams pointer (mcp-go
// copies the request by value): a BeforeCallTool hook opens a link under
// that pointer, the AfterCallTool hook (whose result is the
// *mcp.CreateTaskResult) sets the id, and OnError closes it without one.
type taskLinks struct {
	// match tells the task-augmented calls whose executions this serves.
	match   func(context.Context, *mcp.CallToolRequest) bool
	links   sync.Map // *mcp.TaskParams -> *taskLink
	cancels sync.Map // task id -> context.CancelFunc of its execution
}

type taskLink struct {
	done chan struct{}
	id   string // set before done is closed
}

func (l *taskLinks) install(h *server.Hooks, s *server.MCPServer) {
	mine := func(ctx context.Context, r *mcp.CallToolRequest) bool {
		return r != nil && r.Params.Task != nil && forServer(ctx, s) && l.match(ctx, r)
	}
	h.AddBeforeCallTool(func(ctx context.Context, _ any, r *mcp.CallToolRequest) {
		if mine(ctx, r) {
			l.links.Store(r.Params.Task, &taskLink{done: make(chan struct{})})
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
		l.close(r.Params.Task, id)
	})
	// After mcp-go has marked the task cancelled: before it, the execution
	// could end first and make the task completed, failing the
	// tasks/cancel.
	h.AddAfterCancelTask(func(ctx context.Context, _ any, r *mcp.CancelTaskRequest, _ *mcp.CancelTaskResult) {
		if r == nil || !forServer(ctx, s) {
			return
		}
		if cancel, ok := l.cancels.Load(r.Params.TaskId); ok {
			cancel.(context.CancelFunc)()
		}
	})
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, _ error) {
		if r, ok := message.(*mcp.CallToolRequest); ok && method == mcp.MethodToolsCall && mine(ctx, r) {
			l.close(r.Params.Task, "")
		}
	})
}

// close sets the link's id and lets the task's execution go on. The
// execution removes the link once it has read it; a link whose execution
// never started (mcp-go refused the call) is removed here.
func (l *taskLinks) close(key *mcp.TaskParams, id string) {
	v, ok := l.links.Load(key)
	if !ok {
		return
	}
	link := v.(*taskLink)
	link.id = id
	close(link.done)
	if id == "" {
		l.links.Delete(key)
	}
}

// wait returns the id of the task whose params are key, waiting for
// mcp-go's answer to the tools/call (it follows the start of the task's
// goroutine by microseconds), or "" when no hook saw the call or ctx ends
// first.
func (l *taskLinks) wait(ctx context.Context, key *mcp.TaskParams) string {
	if key == nil {
		return ""
	}
	v, ok := l.links.Load(key)
	if !ok {
		return ""
	}
	link := v.(*taskLink)
	select {
	case <-link.done:
		l.links.Delete(key)
		return link.id
	case <-ctx.Done():
		// mcp-go cancels ctx just after the hook closed the link: both may
		// be ready.
		l.links.Delete(key)
		select {
		case <-link.done:
			return link.id
		default:
			return ""
		}
	}
}

// hybridTask reports whether mcp-go runs the call r as a task through the
// tool middleware: a tool of s (not a task tool) that supports tasks,
// called with a task.
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
