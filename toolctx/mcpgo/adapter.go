package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// Option configures [Middleware], [ServerOption], [AddHooks], [AddTool] and
// [AddTaskTool]: the kit's options (see package toolctx/adapter),
// re-exported.
type Option = adapter.Option

// The options, as [adapter.WithTransport], [adapter.WithNormalizer] and
// [adapter.WithFallbackLogger] describe them. Without WithTransport the
// transport is detected: mcp-go's in-process, streamable HTTP, SSE and
// stdio sessions are recognised, and any other session (a custom one) or
// none is [toolctx.TransportUnknown].
var (
	WithTransport      = adapter.WithTransport
	WithNormalizer     = adapter.WithNormalizer
	WithFallbackLogger = adapter.WithFallbackLogger
)

// errNoResult is the cause recorded when an mcp-go handler returns neither a
// result nor an error.
var errNoResult = errors.New("mcpgo: the mcp-go tool handler returned a nil result and a nil error")

// errNoCall is the cause recorded when the adapter's terminal handler is
// called outside a call the adapter started (a misuse: a middleware that
// stored the handler and called it later).
var errNoCall = errors.New("mcpgo: the terminal handler was called outside the adapter")

type callKey struct{}

// call is one tool call in flight. The chain runs in mcp-go's context
// carrying the call under callKey, where the terminal handler finds
// mcp-go's next handler and the original request.
type call struct {
	adapter.Call[*mcp.CallToolResult]
	e      *engine
	mreq   mcp.CallToolRequest
	next   server.ToolHandlerFunc
	sender sender
	// reject, when set, is what the terminal handler returns instead of
	// calling mcp-go: the call was rejected before the tool middleware (see
	// hooks.go).
	reject *toolctx.CallResult
	// cur is the Request the terminal handler received (the call's or a
	// copy an interceptor made); handlers registered with AddTool run with
	// it.
	cur *toolctx.Request
	// mres and tres are what mcp-go's next returned and its conversion: a
	// successful tres that comes back unchanged is answered with mres, as is.
	mres *mcp.CallToolResult
	tres *toolctx.CallResult
	// stash is the result of a handler registered with AddTool, which
	// answered mcp-go with stashFor.
	stash    *toolctx.CallResult
	stashFor *mcp.CallToolResult
	// checked is the mcp-go result last checked inside the chain (encodable,
	// and valid against the output schema where that applies): the answer
	// needs no second check when it is that one.
	checked *mcp.CallToolResult
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// engine is one adapter value: its options and chain.
type engine struct {
	cfg     *adapter.Config
	handler toolctx.Handler
	// schemas caches the native tools' compiled output schemas.
	schemas schemaCache
	// marks, when set, tells the adapter's own hooks which calls entered
	// the tool middleware (see hooks.go). Only [ServerOption], which
	// installs the middleware and the hooks of one adapter on one server,
	// sets it.
	marks *sync.Map
	// tasks, set by [ServerOption] too, tells the middleware the id of
	// the task it runs as, for a tool mcp-go runs as a task through the
	// tool middleware (the hybrid mode; see task.go).
	tasks *taskLinks
}

// Middleware returns an mcp-go tool middleware that runs m around every
// tool call of the server it is installed on: tools registered natively with
// (*server.MCPServer).AddTool, whose handlers stay as they are, and toolmw
// Handlers registered with [AddTool]. m is typically a middleware.Chain's
// Middleware(); a nil m runs no interceptor but keeps every other guarantee.
//
// For each call the adapter
//   - builds a [toolctx.Request]: the tool name, the raw arguments, a
//     generated CallID (mcp-go does not expose the JSON-RPC id to
//     middleware), the session id, the transport, the client's _meta
//     (untrusted), the HTTP header on HTTP transports, and the identity and
//     request id an HTTP layer put in the context ([toolctx.IdentityFrom],
//     [toolctx.RequestIDFrom]);
//   - runs m around a terminal handler that calls mcp-go's next handler: a
//     returned Go error becomes [toolctx.ErrorResult](err), keeping the
//     raw error as the cause; a result with IsError is the handler's own
//     public isError result;
//   - runs the chain contained, as [adapter.Call.Serve] describes: a
//     panic or runtime.Goexit that escapes the whole chain is reported to
//     the [WithFallbackLogger] logger, and a call the client cancelled
//     gets the public "canceled" result;
//   - normalizes the result ([toolctx.Normalized]) and answers mcp-go with
//     public fields only and a nil Go error, so a raw message never becomes
//     a JSON-RPC -32603 error text. A failure carries its public code and
//     detail under _meta[toolctx.ErrorMetaKey] as {"code", "detail"}.
//
// A successful result that the chain did not replace goes back to mcp-go as
// the very *mcp.CallToolResult the handler returned, losslessly. An
// interceptor may pass a copy of the Request with other Arguments to the
// next handler: mcp-go's handler then receives those arguments (other
// fields of the copy do not reach a native mcp-go handler).
//
// Install it first (outermost) with [ServerOption] or
// (*server.MCPServer).Use: mcp-go applies tool middleware in the order
// added, first outermost, and middleware outside it would see the raw
// errors and panics it exists to contain.
//
// mcp-go runs tool lookup, tool filters, OnBeforeCallTool hooks and
// input-schema validation (server.WithInputSchemaValidation) before any
// tool middleware: an unknown tool is a JSON-RPC -32602 protocol error, and
// invalid arguments are an isError result with the validator's feedback.
// The middleware alone does not see those calls; [AddHooks] (which
// [ServerOption] installs for you) runs m for them, after mcp-go has
// rejected them, and the client still gets mcp-go's answer unchanged.
func Middleware(m toolctx.Middleware, opts ...Option) server.ToolHandlerMiddleware {
	return newEngine(m, opts).middleware()
}

// ServerOption installs [Middleware](m, opts...) with
// server.WithToolHandlerMiddleware and [AddHooks](hooks, m, opts...) on the
// server's hooks, so that the chain also runs for the calls mcp-go rejects
// before any tool middleware (an unknown tool, invalid arguments).
//
// Pass it to server.NewMCPServer before any other tool middleware option
// (server.WithRecovery, server.WithLogger, ...), so that it is outermost,
// and after server.WithHooks, if you use that: server.WithHooks replaces
// the server's hooks, so a WithHooks given after ServerOption drops the
// adapter's (call [AddHooks] on your hooks instead, then). ServerOption adds
// to the hooks the server has when it is applied, creating them if there are
// none; its hooks act only on calls to that server, so one *server.Hooks may
// be shared by several servers. Do not also call AddHooks for the same
// server: each rejected call would run the chain twice.
// With [WithVisibility] among opts it also installs the predicate as an
// mcp-go tool filter ([ToolFilter]).
func ServerOption(m toolctx.Middleware, opts ...Option) server.ServerOption {
	e := newEngine(m, opts)
	e.marks = new(sync.Map)
	mw := e.middleware()
	return func(s *server.MCPServer) {
		e.tasks = &taskLinks{match: func(ctx context.Context, r *mcp.CallToolRequest) bool { return hybridTask(ctx, s, r) }}
		server.WithToolHandlerMiddleware(mw)(s)
		if f := toolFilter(e.cfg); f != nil {
			server.WithToolFilter(f)(s)
		}
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		e.addHooks(h, s)
		e.tasks.install(h, s)
	}
}

func newConfig(opts []Option) *adapter.Config { return adapter.NewConfig("toolmw/mcpgo", opts...) }

func newEngine(m toolctx.Middleware, opts []Option) *engine {
	e := &engine{cfg: newConfig(opts)}
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
			e.markEntered(ctx)
			taskID := ""
			if request.Params.Task != nil && e.tasks != nil {
				// Perhaps the execution of a task (the hybrid mode).
				var end func()
				ctx, taskID, end = e.tasks.begin(ctx, request.Params.Task)
				defer end()
			}
			c := &call{e: e, mreq: request, next: next}
			c.sender.init(ctx, &request)
			return e.serve(ctx, c, taskID), nil
		}
	}
}

// serve runs the chain for c, whose mcp-go context is ctx, and returns the
// answer for mcp-go.
func (e *engine) serve(ctx context.Context, c *call, taskID string) *mcp.CallToolResult {
	fillRequest(&c.Request, ctx, &c.mreq, e.cfg.Transport)
	c.Request.TaskID = taskID
	return c.Serve(context.WithValue(ctx, callKey{}, c), e.cfg, e.handler, c, &c.sender)
}

// Encode implements adapter.Codec: what mcp-go gets for the chain's result
// res, and why it cannot be sent: its normalized public fields, or the very
// result the handler returned when the chain passed a success through; one
// the terminal did not check already is checked as the terminal checks a
// handler's.
func (c *call) Encode(ctx context.Context, res *toolctx.CallResult) (*mcp.CallToolResult, error) {
	res = toolctx.Normalized(ctx, res, c.e.cfg.Normalizer)
	var out *mcp.CallToolResult
	switch {
	case !res.IsError && res == c.tres && c.mres != nil:
		out = c.mres
	case c.stash != nil && res == c.stash && !res.IsError:
		out = c.stashFor
	default:
		out = toMCP(res)
	}
	if out == c.checked {
		return out, nil
	}
	return out, c.e.checkAnswer(ctx, c.mreq.Params.Name, out)
}

// Failure implements adapter.Codec.
func (*call) Failure(pub errs.Public) *mcp.CallToolResult { return failureResult(pub) }

// failureResult is a content-free failure carrying only pub's code and
// message.
func failureResult(pub errs.Public) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{toolctx.ErrorMetaKey: map[string]any{"code": string(pub.Code)}}}},
		Content: []mcp.Content{mcp.NewTextContent(pub.Message)},
		IsError: true,
	}
}

// terminal is the innermost toolmw handler: it calls mcp-go's next handler.
func (e *engine) terminal(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	c := callFrom(ctx)
	if c == nil {
		return toolctx.ErrorResult(errNoCall)
	}
	if c.reject != nil {
		return c.reject
	}
	mreq := c.mreq
	if req != &c.Request && req != nil && !bytes.Equal(req.Arguments.JSON(), c.Request.Arguments.JSON()) {
		var args any
		if err := json.Unmarshal(req.Arguments.JSON(), &args); err != nil {
			return toolctx.ErrorResult(err)
		}
		mreq.Params.Arguments = args
		mreq.Params.RawArguments = req.Arguments.JSON()
	}
	if req != &c.Request && req != nil && req.RequestState != c.Request.RequestState {
		// An interceptor passed another request state (one it unsealed):
		// the tool gets that.
		mreq.Params.RequestState = req.RequestState
	}
	if req == nil {
		req = &c.Request
	}
	c.cur = req
	r, err := c.next(ctx, mreq)
	if c.stash != nil && err == nil && r == c.stashFor {
		return c.stash
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
		// What mcp-go does after the middleware (encode the result,
		// validate it against the output schema) must not fail with the
		// value in its message: fail here, inside the chain.
		if err := e.checkAnswer(ctx, mreq.Params.Name, r); err != nil {
			return toolctx.ErrorResult(err)
		}
		c.checked = r
	}
	t := fromMCP(r)
	c.mres, c.tres = r, t
	return t
}

// fillRequest fills req from what mcp-go exposes.
func fillRequest(req *toolctx.Request, ctx context.Context, r *mcp.CallToolRequest, transport toolctx.Transport) {
	req.Tool = r.Params.Name
	req.Arguments = arguments(r)
	req.CallID = adapter.NewCallID()
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
	if m := metaMap(r.Params.Meta); len(m) > 0 {
		req.Meta = m
	}
	if len(r.Header) > 0 {
		req.Header = r.Header
	}
	req.InputResponses, req.RequestState = adapter.RawValues(r.Params.InputResponses), r.Params.RequestState
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

// rawArguments is the JSON of r's arguments, encoded now where mcp-go has
// only their value.
func rawArguments(r *mcp.CallToolRequest) json.RawMessage {
	if len(r.Params.RawArguments) > 0 {
		return r.Params.RawArguments
	}
	switch a := r.Params.Arguments.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return a
	}
	b, err := json.Marshal(r.Params.Arguments)
	if err != nil {
		return nil
	}
	return b
}

// detectTransport names the transport of mcp-go's session.
//
// In-process and streamable HTTP sessions are told by what mcp-go exports:
// the *server.InProcessSession type, and server.SessionWithStreamableHTTPConfig,
// the interface only the streamable HTTP session implements. For SSE and
// stdio mcp-go v1.2 offers nothing: the session types (sseSession,
// stdioSession) are unexported and implement no interface of their own, and
// neither server puts a value in the context that names it (only the
// session, and on SSE the request header under an unexported key; its
// WithSSEContextFunc and WithStdioContextFunc are the application's). So
// those two are told by the session type's name in mcp-go's package, which
// a test per transport holds to (e2e_test.go), and anything else is
// [toolctx.TransportUnknown]; WithTransport fixes the transport instead.
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
