package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// Option configures [Middleware], [ServerOption], [AddHooks], [AddTool],
// [AddTaskTool] and [ToolFilter]: the kit's options, re-exported.
type Option = adapter.Option

// The options, as the kit describes them. Without WithTransport the
// transport is detected from mcp-go's session, else
// [toolctx.TransportUnknown].
var (
	WithTransport      = adapter.WithTransport
	WithNormalizer     = adapter.WithNormalizer
	WithFallbackLogger = adapter.WithFallbackLogger
)

var (
	errNoResult = errors.New("mcpgo: the mcp-go tool handler returned a nil result and a nil error")
	errNoCall   = errors.New("mcpgo: the terminal handler was called outside the adapter")
)

// call is one tool call, the codec of its adapter.Call (callFrom).
type call struct {
	adapter.Call[*mcp.CallToolResult]
	e      *engine
	mreq   mcp.CallToolRequest
	next   server.ToolHandlerFunc
	sender sender
	reject *toolctx.CallResult // the terminal's result for a call mcp-go rejected (hooks.go)
	runs   adapter.Invocations[invocation]
}

var noInvocation invocation // never written

// invocation is the state of one run of the terminal handler, which the
// tool's context carries (adapter.InvocationFrom).
type invocation struct {
	req *toolctx.Request // as the terminal received it; AddTool's handlers run with it
	// A success tres, the conversion of mcp-go's mres, that comes back
	// unchanged is answered with mres; stash, an AddTool handler's result,
	// with stashFor; checked needs no second check.
	mres, stashFor, checked *mcp.CallToolResult
	tres, stash             *toolctx.CallResult
	buf                     resultBuf // the conversion's memory (convert.go)
}

func callFrom(ctx context.Context) *call {
	c, _ := adapter.CodecFrom[*mcp.CallToolResult](ctx).(*call)
	return c
}

// engine is one adapter value: its options and chain.
type engine struct {
	cfg     *adapter.Config
	handler toolctx.Handler
	schemas adapter.SchemaCache[string, *jsonschema.Schema] // the native tools' output schemas, by tool name
	// Set by [ServerOption] only: marks tells the hooks which calls entered
	// the middleware (hooks.go), tasks a hybrid task its id (task.go).
	marks *adapter.Marks
	tasks *taskLinks
}

// Middleware returns an mcp-go tool middleware that runs m around every
// tool call of the server, native or registered with [AddTool]; a nil m
// runs no interceptor but keeps every other guarantee. A Go error becomes
// the chain's raw cause, a handler's isError result is public, and the
// chain's result is normalized and answered with public fields only and a
// nil Go error; a success the chain did not replace goes back as the
// handler returned it. The chain runs contained, as [adapter.Call.Serve]
// describes. Install it first (outermost). The calls mcp-go rejects before
// any tool middleware reach the chain only through [AddHooks]. See
// docs/adapters/mcpgo.md. An option given a value it cannot use panics.
func Middleware(m toolctx.Middleware, opts ...Option) server.ToolHandlerMiddleware {
	return newEngine(m, mustConfig("Middleware", opts)).middleware()
}

// ServerOption installs [Middleware](m, opts...), [AddHooks] on the
// server's hooks (so the chain also runs for the calls mcp-go rejects
// before any tool middleware), the hybrid task links, and, with
// [WithVisibility], [ToolFilter]. Give it before any other tool middleware
// option, and after server.WithHooks, which replaces the server's hooks;
// its hooks act only on calls to that server. An option given a value it
// cannot use panics.
func ServerOption(m toolctx.Middleware, opts ...Option) server.ServerOption {
	e := newEngine(m, mustConfig("ServerOption", opts))
	e.marks = new(adapter.Marks)
	mw := e.middleware()
	return func(s *server.MCPServer) {
		e.tasks = &taskLinks{match: func(ctx context.Context, r *mcp.CallToolRequest) bool { return hybridTask(ctx, s, r) }}
		server.WithToolHandlerMiddleware(mw)(s)
		if f := toolFilter(e.cfg); f != nil {
			server.WithToolFilter(f)(s)
		}
		h := hooksOf(s)
		e.addHooks(h, s)
		e.tasks.install(h, s)
	}
}

const adapterName = "toolmw/mcpgo"

func mustConfig(ctor string, opts []Option) *adapter.Config {
	return adapter.MustConfig(adapterName, "mcpgo."+ctor, opts...)
}

func newEngine(m toolctx.Middleware, cfg *adapter.Config) *engine {
	e := &engine{cfg: cfg}
	var terminal toolctx.Handler = toolctx.HandlerFunc(e.terminal)
	if m != nil {
		terminal = m(terminal)
	}
	e.handler = terminal
	return e
}

func (e *engine) middleware() server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			e.marks.Enter(ctx)
			taskID := ""
			if request.Params.Task != nil && e.tasks != nil {
				var end func()
				ctx, taskID, end = e.tasks.Begin(ctx, request.Params.Task)
				defer end()
			}
			c := &call{e: e, mreq: request, next: next}
			c.sender.init(ctx, &request)
			return e.serve(ctx, c, taskID), nil
		}
	}
}

func (e *engine) serve(ctx context.Context, c *call, taskID string) *mcp.CallToolResult {
	fillRequest(&c.Request, ctx, &c.mreq, e.cfg.Transport)
	c.Request.TaskID = taskID
	return c.Serve(ctx, e.cfg, e.handler, c, &c.sender)
}

// Encode implements adapter.Codec: res's public fields, or the very result
// the handler returned when the chain passed a success through, checked
// unless the terminal checked it.
func (c *call) Encode(ctx context.Context, res *toolctx.CallResult) (*mcp.CallToolResult, error) {
	res = toolctx.Normalized(ctx, res, c.e.cfg.Normalizer)
	inv := &noInvocation // no run of the terminal returned
	if run := c.runs.Last(); run != nil {
		inv = &run.State
	}
	var out *mcp.CallToolResult
	switch {
	case !res.IsError && res == inv.tres && inv.mres != nil:
		out = inv.mres
	case inv.stash != nil && res == inv.stash && !res.IsError:
		out = inv.stashFor
	default:
		out = toMCP(res)
	}
	if out == inv.checked {
		return out, nil
	}
	return out, c.e.checkAnswer(ctx, c.mreq.Params.Name, out)
}

// Failure implements adapter.Codec.
func (*call) Failure(pub errs.Public) *mcp.CallToolResult { return failureResult(pub) }

// failureResult is a content-free failure carrying only pub.
func failureResult(pub errs.Public) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{toolctx.ErrorMetaKey: adapter.ErrorMeta(pub)}}},
		Content: []mcp.Content{mcp.NewTextContent(pub.Message)},
		IsError: true,
	}
}

func (e *engine) terminal(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	c := callFrom(ctx)
	if c == nil {
		return toolctx.ErrorResult(errNoCall)
	}
	if c.reject != nil {
		return c.reject
	}
	if req == nil {
		req = &c.Request
	}
	mreq := c.mreq
	if req != &c.Request && !bytes.Equal(req.Arguments.JSON(), c.Request.Arguments.JSON()) {
		var args any
		if err := json.Unmarshal(req.Arguments.JSON(), &args); err != nil {
			return toolctx.ErrorResult(err)
		}
		mreq.Params.Arguments, mreq.Params.RawArguments = args, req.Arguments.JSON()
	}
	mreq.Params.RequestState = req.RequestState // the call's own, unless an interceptor changed it
	run := c.runs.Start(ctx)
	defer c.runs.Done(run)
	inv := &run.State
	inv.req = req
	r, err := c.next(run, mreq)
	if inv.stash != nil && err == nil && r == inv.stashFor {
		return inv.stash
	}
	if err != nil {
		return toolctx.ErrorResult(err)
	}
	if r == nil {
		return toolctx.ErrorResult(errNoResult)
	}
	if text, ok := structuredHandlerFailure(r); ok {
		return toolctx.ErrorResult(&StructuredHandlerError{Text: text})
	}
	if !r.IsError {
		// What mcp-go does after the middleware must not fail: fail here.
		if err := e.checkAnswer(ctx, mreq.Params.Name, r); err != nil {
			return toolctx.ErrorResult(err)
		}
		inv.checked = r
	}
	t := fromMCPInto(r, &inv.buf)
	inv.mres, inv.tres = r, t
	return t
}

func fillRequest(req *toolctx.Request, ctx context.Context, r *mcp.CallToolRequest, transport toolctx.Transport) {
	req.Tool = r.Params.Name
	req.Arguments = arguments(r)
	req.CallID = adapter.NewCallID()
	identify(req, ctx, transport)
	if m := metaMap(r.Params.Meta); len(m) > 0 {
		req.Meta = m
	}
	if len(r.Header) > 0 {
		req.Header = r.Header
	}
	req.InputResponses, req.RequestState = adapter.RawValues(r.Params.InputResponses), r.Params.RequestState
}

// identify sets req's caller from ctx (a tools/call's and a tools/list's
// alike): identity, request id, session and transport.
func identify(req *toolctx.Request, ctx context.Context, transport toolctx.Transport) {
	req.RequestID = toolctx.RequestIDFrom(ctx)
	req.Identity = toolctx.IdentityFrom(ctx)
	session := server.ClientSessionFromContext(ctx)
	if session != nil {
		req.SessionID = session.SessionID()
	}
	if transport == "" {
		transport = detectTransport(session)
	}
	req.Transport = transport
}

// arguments are r's arguments for the chain: the JSON mcp-go kept, or the
// value its in-process client handed over, encoded only if the chain reads
// it.
func arguments(r *mcp.CallToolRequest) toolctx.Arguments {
	if len(r.Params.RawArguments) > 0 {
		return toolctx.RawArguments(r.Params.RawArguments)
	}
	if a, ok := r.Params.Arguments.(json.RawMessage); ok {
		return toolctx.RawArguments(a)
	}
	return toolctx.DecodedArguments(r.Params.Arguments)
}

// detectTransport names the transport of mcp-go's session: by its exported
// type or interface, and for SSE and stdio (mcp-go exports nothing that
// tells them) by its type's name (docs/adapters/mcpgo.md, "The request").
func detectTransport(session server.ClientSession) toolctx.Transport {
	switch session.(type) {
	case nil:
		return toolctx.TransportUnknown
	case *server.InProcessSession:
		return toolctx.TransportInMemory
	case server.SessionWithStreamableHTTPConfig:
		return toolctx.TransportStreamableHTTP
	}
	t := reflect.TypeOf(session)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() != "github.com/mark3labs/mcp-go/server" {
		return toolctx.TransportUnknown
	}
	switch t.Name() {
	case "sseSession":
		return toolctx.TransportSSE
	case "stdioSession":
		return toolctx.TransportStdio
	}
	return toolctx.TransportUnknown
}
