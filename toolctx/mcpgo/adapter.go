package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolmw/toolmw/internal/contain"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Option configures [Middleware], [ServerOption] and [AddTool].
type Option func(*config)

type config struct {
	normalizer errs.Normalizer
	transport  toolctx.Transport
	logger     *slog.Logger
}

func newConfig(opts []Option) config {
	var c config
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	return c
}

func (c *config) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}

// WithNormalizer sets the rules the adapter applies to failures that reach
// it unnormalized. Use the same normalizer as the chain's
// middleware.Normalize. Default: errs.Normalizer{}.
func WithNormalizer(n errs.Normalizer) Option {
	return func(c *config) { c.normalizer = n }
}

// WithTransport fixes the transport recorded in [toolctx.Request.Transport]
// instead of detecting it. Detection recognises mcp-go's in-process,
// streamable HTTP, SSE and stdio sessions, and reports
// [toolctx.TransportUnknown] for any other session (a custom one) or none.
func WithTransport(t toolctx.Transport) Option {
	return func(c *config) { c.transport = t }
}

// WithFallbackLogger sets where the adapter reports what the chain's own
// hooks cannot: a panic that escaped the whole chain (the chain had no
// middleware.Recover, or an interceptor outside it panicked), a
// runtime.Goexit in the chain, and a result an interceptor built that
// cannot be sent (it does not encode, or fails the tool's output schema).
// Such a report holds the raw value (and a panic's stack) and stays on the
// server. Default: slog.Default().
func WithFallbackLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

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
// mcp-go's next handler and the original request, and, when the call is
// answered, as the chain's toolctx.ResultChecker (see runChain).
type call struct {
	ctx  context.Context // mcp-go's
	req  toolctx.Request
	mreq mcp.CallToolRequest
	next server.ToolHandlerFunc
	// reject, when set, is what the terminal handler returns instead of
	// calling mcp-go: the call was rejected before the tool middleware (see
	// hooks.go).
	reject *toolctx.CallResult
	// cur is the Request the terminal handler received (req or a copy an
	// interceptor made); handlers registered with AddTool run with it.
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
	// The chain's run (see adapter.run) leaves its result in res and,
	// when answer is set, the answer for mcp-go in out.
	res    *toolctx.CallResult
	answer bool
	out    *mcp.CallToolResult
	// a is the adapter running the call, for CheckResult.
	a *adapter
	// memo is the last result CheckResult checked for the chain's hooks
	// (toolctx.Sendable), so that answer does not check it again.
	memo atomic.Pointer[checkedAnswer]
	// notifier is the call's toolctx.Notifier, in the chain's context.
	notifier notifier
}

// checkedAnswer is a chain's result, the answer made of it for mcp-go, and
// why that answer cannot be sent (nil when it can).
type checkedAnswer struct {
	res *toolctx.CallResult
	out *mcp.CallToolResult
	err error
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

type adapter struct {
	cfg     config
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
//   - recovers a panic that escapes the whole chain (reported to the
//     [WithFallbackLogger] logger) as a last resort;
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
	return newAdapter(m, opts).middleware()
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
func ServerOption(m toolctx.Middleware, opts ...Option) server.ServerOption {
	a := newAdapter(m, opts)
	a.marks = new(sync.Map)
	mw := a.middleware()
	return func(s *server.MCPServer) {
		a.tasks = &taskLinks{match: func(ctx context.Context, r *mcp.CallToolRequest) bool { return hybridTask(ctx, s, r) }}
		server.WithToolHandlerMiddleware(mw)(s)
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		a.addHooks(h, s)
		a.tasks.install(h, s)
	}
}

func newAdapter(m toolctx.Middleware, opts []Option) *adapter {
	a := &adapter{cfg: newConfig(opts)}
	var terminal toolctx.Handler = toolctx.HandlerFunc(a.terminal)
	if m != nil {
		terminal = m(terminal)
	}
	a.handler = terminal
	return a
}

func (a *adapter) middleware() server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return a.serve(ctx, request, next), nil
		}
	}
}

func (a *adapter) serve(ctx context.Context, request mcp.CallToolRequest, next server.ToolHandlerFunc) *mcp.CallToolResult {
	a.markEntered(ctx)
	taskID := ""
	if request.Params.Task != nil && a.tasks != nil {
		// Perhaps the execution of a task (the hybrid mode).
		var end func()
		ctx, taskID, end = a.tasks.begin(ctx, request.Params.Task)
		defer end()
	}
	c := &call{mreq: request, next: next, answer: true, a: a}
	c.ctx = ctx
	fillRequest(&c.req, ctx, &request, a.cfg.transport)
	c.req.TaskID = taskID
	c.notifier.init(ctx, &request)
	a.run(c)
	return c.out
}

// answer sets c.out, what mcp-go gets for the chain's result c.res: its
// normalized public fields, or the very result the handler returned when
// the chain passed a success through. It runs on the chain's coroutine,
// after the chain (from runChain's deferred function, so after a Goexit
// too): normalizing calls the cause's Is and As methods, which may panic,
// and a panic here becomes the generic failure.
func (a *adapter) answer(c *call) {
	defer func() {
		if v := recover(); v != nil {
			a.logSafely(c, "toolmw/mcpgo: normalizing the tool middleware chain's result panicked; the client gets the generic failure",
				"panic", fmt.Sprint(v))
			c.out = genericFailure(a.cfg.normalizer.GenericMessage)
		}
	}()
	var out *mcp.CallToolResult
	var err error
	if m := c.memo.Load(); m != nil && m.res == c.res {
		out, err = m.out, m.err // checked for the chain's hooks already
	} else {
		out, err = c.answerFor(c.res)
	}
	if err != nil {
		// An interceptor made this result (or the chain's normalized
		// failure carries public detail), and no hook in the chain checked
		// it (toolctx.Sendable): the chain has ended, so a failure here can
		// only be logged.
		a.logSafely(c, "toolmw/mcpgo: the tool middleware chain's result cannot be sent; the client gets the generic failure",
			"error", fmt.Sprint(err))
		out = genericFailure(a.cfg.normalizer.GenericMessage)
	}
	c.out = out
}

// answerFor returns what mcp-go gets for the chain's result res, and why it
// cannot be sent: its normalized public fields, or the very result the
// handler returned when the chain passed a success through; one the
// terminal did not check already is checked as the terminal checks a
// handler's.
func (c *call) answerFor(res *toolctx.CallResult) (*mcp.CallToolResult, error) {
	a := c.a
	res = toolctx.Normalized(c.ctx, res, a.cfg.normalizer)
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
	return out, a.checkAnswer(c.ctx, c.mreq.Params.Name, out)
}

// CheckResult implements toolctx.ResultChecker for the chain's hooks: it
// returns why mcp-go could not be sent res, checking it as answer would
// (once: answer reuses the check). Normalizing calls the cause's methods,
// which may panic: that is returned as the reason.
func (c *call) CheckResult(res *toolctx.CallResult) (err error) {
	if m := c.memo.Load(); m != nil && m.res == res {
		return m.err
	}
	if res != nil && !res.IsError && res == c.tres && c.mres != nil && c.mres == c.checked {
		return nil // the handler's success, checked by the terminal
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("mcpgo: normalize the chain's result: %w", errs.NewPanicError(v))
		}
	}()
	out, err := c.answerFor(res)
	c.memo.Store(&checkedAnswer{res: res, out: out, err: err})
	return err
}

// genericFailure is the internal failure with the generic message (msg, or
// errs.GenericMessage when empty), built from constants only.
func genericFailure(msg string) *mcp.CallToolResult {
	if msg == "" {
		msg = errs.GenericMessage
	}
	return &mcp.CallToolResult{
		Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{toolctx.ErrorMetaKey: map[string]any{"code": string(errs.CodeInternal)}}}},
		Content: []mcp.Content{mcp.NewTextContent(msg)},
		IsError: true,
	}
}

// logSafely logs to the adapter's logger; a logger that panics is ignored.
// Values that print a raw cause are rendered with fmt, which survives their
// Error and String methods panicking.
func (a *adapter) logSafely(c *call, msg string, args ...any) {
	defer func() { _ = recover() }()
	a.cfg.log().ErrorContext(c.ctx, msg, append([]any{"tool", c.req.Tool, "call_id", c.req.CallID}, args...)...)
}

// run calls the chain contained (internal/contain), so that neither a
// panic nor a runtime.Goexit in the chain reaches mcp-go's goroutine (a
// stdio worker, the in-process caller): a panic that escapes the chain is
// recovered, and a Goexit ends only the chain's coroutine, the call ending
// as the internal failure errs.NewPanicError(errs.ErrGoexit). When
// c.answer is set, c.out is the answer for mcp-go.
func (a *adapter) run(c *call) *toolctx.CallResult {
	contain.Run(func() { a.runChain(c) })
	// The chain has returned: nothing more is sent about the call (a
	// goroutine the handler left behind gets toolctx.ErrCallEnded).
	c.notifier.gate.End()
	return c.res
}

// stackReserve is how much stack the chain's coroutine takes at once when
// it starts. A new coroutine starts with a small stack, and a chain of
// interceptors around an mcp-go handler outgrows it several times, each
// time copying (and adjusting) every frame so far. Growing once, while the
// stack holds one frame, costs a fraction of that. It pays end to end:
// toolmw / bare on mcp-go in-process was 1.063-1.093 with it and
// 1.131-1.162 without it, five alternating runs each on 2026-12-01 of `go
// test ./bench -run '^$' -bench 'Interleaved/mcpgo-in' -benchtime 1000x`.
const stackReserve = 8 << 10

// reserveStack makes the goroutine's stack at least stackReserve deep.
//
//go:noinline
func reserveStack() {
	var frame [stackReserve]byte
	keepFrame(&frame)
}

//go:noinline
func keepFrame(f *[stackReserve]byte) { f[0] = 1 }

func (a *adapter) runChain(c *call) {
	reserveStack()
	returned := false
	defer func() {
		if !returned {
			// Neither a return nor a panic: runtime.Goexit (panic(nil) is
			// a *runtime.PanicNilError since Go 1.21).
			v := recover()
			what := "a panic escaped the tool middleware chain; add middleware.Recover to the chain"
			if v == nil {
				v, what = errs.ErrGoexit, "runtime.Goexit was called in the tool middleware chain; the call ends as an internal failure"
			}
			pe := errs.NewPanicError(v)
			a.logSafely(c, "toolmw/mcpgo: "+what, "panic", fmt.Sprint(pe), "stack", string(pe.Stack))
			c.res = toolctx.ErrorResult(pe)
		}
		if c.answer {
			a.answer(c)
		}
	}()
	ctx := context.WithValue(c.ctx, callKey{}, c)
	if c.answer {
		ctx = toolctx.WithResultChecker(ctx, c)
	}
	c.res = a.handler.CallTool(toolctx.WithNotifier(ctx, &c.notifier), &c.req)
	returned = true
}

// terminal is the innermost toolmw handler: it calls mcp-go's next handler.
func (a *adapter) terminal(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	c := callFrom(ctx)
	if c == nil {
		return toolctx.ErrorResult(errNoCall)
	}
	if c.reject != nil {
		return c.reject
	}
	mreq := c.mreq
	if req != &c.req && req != nil && !bytes.Equal(req.Arguments, c.req.Arguments) {
		var args any
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return toolctx.ErrorResult(err)
		}
		mreq.Params.Arguments = args
		mreq.Params.RawArguments = req.Arguments
	}
	if req != &c.req && req != nil && req.RequestState != c.req.RequestState {
		// An interceptor passed another request state (one it unsealed):
		// the tool gets that.
		mreq.Params.RequestState = req.RequestState
	}
	if req == nil {
		req = &c.req
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
		if err := a.checkAnswer(ctx, mreq.Params.Name, r); err != nil {
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
	req.Arguments = rawArguments(r)
	req.CallID = toolctx.NewCallID()
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
	req.InputResponses, req.RequestState = inputResponses(r.Params.InputResponses), r.Params.RequestState
}

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
