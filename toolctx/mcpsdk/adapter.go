package mcpsdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// MethodCallTool is the MCP method the adapter intercepts. Every other method
// goes straight to the SDK.
const MethodCallTool = "tools/call"

// Option configures [Middleware], [Install], [AddTool] and [AddTypedTool].
type Option func(*config)

type config struct {
	transport toolctx.Transport
	fallback  *slog.Logger
}

func newConfig(opts []Option) *config {
	c := &config{transport: toolctx.TransportUnknown}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

func (c *config) logger() *slog.Logger {
	if c.fallback != nil {
		return c.fallback
	}
	return slog.Default()
}

// WithTransport names the transport the server is connected with, for
// [toolctx.Request.Transport]. The SDK does not tell a handler which
// transport a call came on, so the adapter detects only streamable HTTP (the
// one transport that sets the request's Extra); every other call gets t,
// or [toolctx.TransportUnknown] without this option. Use one server (and one
// Install) per transport when the distinction matters:
//
//	mcpsdk.Install(server, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportStdio))
func WithTransport(t toolctx.Transport) Option {
	return func(c *config) {
		if t != "" {
			c.transport = t
		}
	}
}

// WithFallbackLogger sets where the adapter reports a panic that escaped the
// whole chain (no middleware.Recover in it): the value and the stack are
// logged there, server-side, and the client gets the generic message.
// (Put middleware.Recover innermost in the chain so that the chain's own
// hooks see panics as failures.)
// Default: slog.Default().
func WithFallbackLogger(l *slog.Logger) Option {
	return func(c *config) { c.fallback = l }
}

// Install adds [Middleware](m, opts...) to s as a receiving middleware. Call
// it once per server, after any receiving middleware that must run outside
// toolmw (the last one added is the outermost).
func Install(s *mcp.Server, m toolctx.Middleware, opts ...Option) {
	s.AddReceivingMiddleware(Middleware(m, opts...))
}

// Middleware returns an SDK receiving middleware that runs m around every
// tools/call of the server it is added to, whether the tool was registered
// with [mcp.AddTool], [mcp.Server.AddTool] or this package's [AddTool]. Other
// methods pass through untouched. A nil m runs no interceptor but still
// applies the adapter's rules below.
//
// The handler at the end of m calls the SDK and turns what it returns into a
// [*toolctx.CallResult]:
//
//   - a successful result: its content (every kind), structured content and
//     _meta, as is;
//   - an isError result carrying [mcp.CallToolResult.GetError] (a typed
//     handler's error): a failure whose raw cause is that error. The text the
//     SDK copied into the content is dropped;
//   - the SDK's own input-validation failure of a typed tool: an
//     [errs.CodeInvalidArguments] failure whose public message is the SDK's
//     validation message (it describes only the caller's arguments);
//   - an isError result without GetError (a handler's own): public as is;
//   - a Go error (a raw handler's error, an output-schema failure, an
//     error from SDK middleware inside this one, a [*jsonrpc.Error] returned
//     by a handler): a failure whose raw cause is that error;
//   - a panic in the SDK or the handler: a failure whose cause is an
//     [*errs.PanicError];
//   - the SDK's "unknown tool" protocol error: an [errs.CodeUnknownTool]
//     failure; if the chain lets it through, the client gets the SDK's
//     protocol error unchanged. The chain does run for unknown tools, so
//     guards and audit see the attempt.
//
// The chain's result is then normalized ([toolctx.Normalized], default
// rules) and written back with public fields only; a failure carries its
// code and public detail under _meta[[toolctx.ErrorMetaKey]]. A successful
// result the chain did not replace goes back exactly as the SDK produced it.
// A panic that escapes the chain is recovered as a last resort (see
// [WithFallbackLogger]). When the client cancelled the call, the SDK still
// writes a response; the adapter makes it a content-free canceled result,
// whatever the handler returned late.
func Middleware(m toolctx.Middleware, opts ...Option) mcp.Middleware {
	cfg := newConfig(opts)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		var h toolctx.Handler = terminal{next: next}
		if m != nil {
			h = m(h)
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != MethodCallTool {
				return next(ctx, method, req)
			}
			sreq, ok := req.(*mcp.CallToolRequest)
			if !ok || sreq == nil || sreq.Params == nil {
				return next(ctx, method, req)
			}
			return cfg.serve(ctx, h, sreq)
		}
	}
}

type callKey struct{}

type invocationKey struct{}

// call is the adapter's state for one tools/call. It is also the context
// the chain runs in (the SDK's, plus itself as a value), which saves an
// allocation per call.
type call struct {
	context.Context
	req toolctx.Request
	sdk *mcp.CallToolRequest

	runs  atomic.Int32
	first invocation                 // the terminal's first run, without an allocation
	last  atomic.Pointer[invocation] // the terminal's latest run
}

// Value returns c for callKey and defers to the SDK's context otherwise.
func (c *call) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// invocation is one run of the terminal handler (a retrying interceptor may
// run it more than once). It is the context the SDK runs the tool in.
type invocation struct {
	context.Context
	req *toolctx.Request // as the terminal received it

	sdkResult *mcp.CallToolResult // what the SDK returned, if a result
	passed    *toolctx.CallResult // conversion of a successful sdkResult (points to ok)
	ok        toolctx.CallResult
	proto     *protocolError      // an SDK protocol error to pass through
	direct    *toolctx.CallResult // the result of a tool added with AddTool
}

// protocolError is an SDK protocol error the client gets unchanged when the
// chain lets the failure through: its public side is pub.
type protocolError struct {
	pub  *errs.Error
	wire *jsonrpc.Error
}

// Value returns inv for invocationKey and defers to the chain's context
// otherwise.
func (inv *invocation) Value(key any) any {
	if _, ok := key.(invocationKey); ok {
		return inv
	}
	return inv.Context.Value(key)
}

func (e *protocolError) Error() string { return e.pub.Error() }
func (e *protocolError) Unwrap() error { return e.pub }

var (
	errLostCall     = errors.New("mcpsdk: the call's state is missing from the context (an interceptor replaced the context instead of deriving from it)")
	errNilSDKResult = errors.New("mcpsdk: the SDK returned neither a result nor an error")
)

func (cfg *config) serve(ctx context.Context, h toolctx.Handler, sreq *mcp.CallToolRequest) (result mcp.Result, err error) {
	growStack()
	c := &call{Context: ctx, sdk: sreq}
	cfg.fill(ctx, &c.req, sreq)
	defer func() {
		if v := recover(); v != nil {
			pe := errs.NewPanicError(v)
			cfg.logger().ErrorContext(ctx, "toolmw/mcpsdk: a panic escaped the middleware chain; add middleware.Recover to the chain",
				"panic", pe.Error(), "call", toolctx.DetailsOf(&c.req), "stack", string(pe.Stack))
			result, err = cfg.finish(ctx, c, toolctx.ErrorResult(pe))
		}
	}()
	res := h.CallTool(c, &c.req)
	return cfg.finish(ctx, c, res)
}

func (cfg *config) finish(ctx context.Context, c *call, res *toolctx.CallResult) (mcp.Result, error) {
	if cerr := ctx.Err(); cerr != nil {
		// The client cancelled (or the request's own deadline passed): the
		// SDK writes a response anyway, so it carries nothing of the call.
		pub, _ := errs.Normalize(cerr)
		return failureResult(pub), nil
	}
	inv := c.last.Load()
	if inv != nil && res != nil {
		if inv.proto != nil && res.IsError && res.Cause() == error(inv.proto) {
			return nil, inv.proto.wire
		}
		if inv.passed != nil && res == inv.passed {
			return inv.sdkResult, nil
		}
	}
	var shell *mcp.CallToolResult
	if inv != nil {
		shell = inv.sdkResult
	}
	return toSDKResult(shell, toolctx.Normalized(ctx, res, errs.Normalizer{})), nil
}

// terminal is the handler at the end of the chain: it calls the SDK.
type terminal struct {
	next mcp.MethodHandler
}

func (t terminal) CallTool(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return toolctx.ErrorResult(errLostCall)
	}
	sreq := c.sdk
	if req != &c.req && !sameBytes(req.Arguments, c.req.Arguments) {
		// An interceptor passed a request with other arguments: the tool
		// gets those.
		p := *sreq.Params
		p.Arguments = req.Arguments
		r := *sreq
		r.Params = &p
		sreq = &r
	}
	inv := &c.first
	if c.runs.Add(1) > 1 {
		inv = new(invocation) // a retry, perhaps concurrent with the first run
	}
	inv.Context, inv.req = ctx, req
	defer func() {
		if v := recover(); v != nil {
			res = toolctx.ErrorResult(errs.NewPanicError(v))
		}
		c.last.Store(inv)
	}()
	out, err := t.next(inv, MethodCallTool, sreq)
	if cerr := ctx.Err(); cerr != nil {
		// The call was cancelled or ran out of time while the SDK ran it:
		// what came back is late, and the chain sees why.
		return toolctx.ErrorResult(cerr)
	}
	return inv.convert(sreq.Params.Name, out, err)
}

func sameBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b) || bytes.Equal(a, b)
}

// errorStringType is the type of errors.New's errors, and of fmt.Errorf's
// without %w: what the SDK's input validation reports.
var errorStringType = reflect.TypeOf(errors.New(""))

// validationPrefix starts the message of the SDK's input-validation failure
// of a typed tool (mcp/server.go: toolForErr).
const validationPrefix = `validating "arguments": `

// isInputValidation reports whether err is the SDK's own input-validation
// failure: a plain error (no wrapped cause, so not a handler's error that
// wraps anything) whose text starts as the SDK's does.
func isInputValidation(err error) bool {
	return reflect.TypeOf(err) == errorStringType && strings.HasPrefix(err.Error(), validationPrefix)
}

func (inv *invocation) convert(name string, res mcp.Result, err error) *toolctx.CallResult {
	r, _ := res.(*mcp.CallToolResult)
	if inv.direct != nil {
		if err != nil {
			return toolctx.ErrorResult(err)
		}
		inv.sdkResult = r
		return inv.direct
	}
	if err != nil {
		if we, ok := err.(*jsonrpc.Error); ok {
			switch {
			case we.Code == jsonrpc.CodeInvalidParams && we.Message == fmt.Sprintf("unknown tool %q", name):
				inv.proto = &protocolError{pub: errs.UnknownTool(name), wire: we}
				return toolctx.ErrorResult(inv.proto)
			case we.Code == mcp.CodeURLElicitationRequired:
				// The SDK's URL-elicitation flow: a protocol error by design.
				inv.proto = &protocolError{pub: errs.FailedPrecondition("URL elicitation required"),
					wire: &jsonrpc.Error{Code: we.Code, Message: "URL elicitation required", Data: we.Data}}
				return toolctx.ErrorResult(inv.proto)
			}
		}
		return toolctx.ErrorResult(err)
	}
	if r == nil {
		return toolctx.ErrorResult(errNilSDKResult)
	}
	inv.sdkResult = r
	if r.IsError {
		ge := r.GetError()
		switch {
		case ge == nil:
			// The handler's own isError result: its content is public.
			return &toolctx.CallResult{IsError: true, Content: fromSDKContent(r.Content), StructuredContent: r.StructuredContent, Meta: r.Meta}
		case isInputValidation(ge):
			return toolctx.ErrorResult(errs.InvalidArguments(ge.Error()).WithCause(ge))
		}
		return toolctx.ErrorResult(ge)
	}
	inv.ok = toolctx.CallResult{Content: fromSDKContent(r.Content), StructuredContent: r.StructuredContent, Meta: r.Meta}
	inv.passed = &inv.ok
	return inv.passed
}

// fill sets req from what the SDK exposes.
func (cfg *config) fill(ctx context.Context, r *toolctx.Request, sreq *mcp.CallToolRequest) {
	p := sreq.Params
	r.Tool = p.Name
	r.Arguments = p.Arguments
	r.CallID = toolctx.NewCallID()
	r.Transport = cfg.transport
	if sreq.Session != nil {
		r.SessionID = sreq.Session.ID()
	}
	if len(p.Meta) > 0 {
		r.Meta = p.Meta
	}
	ctxIsPerRequest := true
	if ex := sreq.Extra; ex != nil {
		// Only the streamable HTTP transport sets Extra.
		r.Transport = toolctx.TransportStreamableHTTP
		r.Header = ex.Header
		if ti := ex.TokenInfo; ti != nil {
			r.Identity = &toolctx.Identity{Subject: ti.UserID, Scopes: ti.Scopes}
			if rid, ok := ti.Extra[tokenInfoRequestIDKey].(string); ok {
				r.RequestID = rid
			}
		}
		// On a stateful session the context comes from the HTTP request
		// that created the session, not from this one: its identity and
		// request id would be stale.
		ctxIsPerRequest = r.SessionID == ""
	}
	if ctxIsPerRequest {
		if id := toolctx.IdentityFrom(ctx); id != nil {
			r.Identity = id
		}
		if rid := toolctx.RequestIDFrom(ctx); rid != "" {
			r.RequestID = rid
		}
	}
}

// toSDKResult writes r's public fields into an SDK result. shell, when set,
// is the result the SDK produced for this call: copying it keeps the SDK's
// private bookkeeping (its result type) without its content.
func toSDKResult(shell *mcp.CallToolResult, r *toolctx.CallResult) *mcp.CallToolResult {
	out := new(mcp.CallToolResult)
	if shell != nil && shell.InputRequests == nil {
		*out = *shell
	}
	out.InputRequests, out.RequestState = nil, ""
	out.Content = toSDKContent(r.Content)
	out.StructuredContent = r.StructuredContent
	out.IsError = r.IsError
	// A fresh map: the SDK adds its own keys to the result's _meta.
	var meta mcp.Meta
	if len(r.Meta) > 0 || r.Error != nil {
		meta = make(mcp.Meta, len(r.Meta)+1)
		for k, v := range r.Meta {
			meta[k] = v
		}
	}
	if r.IsError && r.Error != nil {
		meta[toolctx.ErrorMetaKey] = errorMeta(*r.Error)
	}
	out.Meta = meta
	return out
}

func errorMeta(pub errs.Public) map[string]any {
	m := map[string]any{"code": string(pub.Code)}
	if pub.Detail != nil {
		m["detail"] = pub.Detail
	}
	return m
}

// failureResult is a content-free failure with only pub.
func failureResult(pub errs.Public) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: pub.Message}},
		Meta:    mcp.Meta{toolctx.ErrorMetaKey: errorMeta(pub)},
	}
}
