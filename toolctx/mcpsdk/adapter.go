package mcpsdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/contain"
	"github.com/toolmw/toolmw/toolctx"
)

// methodCallTool is the MCP method the adapter intercepts. Every other method
// goes straight to the SDK.
const methodCallTool = "tools/call"

// Option configures [Middleware], [Install], [AddTool] and [AddTypedTool].
type Option func(*config)

type config struct {
	transport  toolctx.Transport
	fallback   *slog.Logger
	normalizer errs.Normalizer
	// noSchemaCache turns the input-schema cache off (tests and
	// benchmarks compare with it).
	noSchemaCache bool
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
// one transport that sets the request's Extra) and SSE behind [SSE]; every
// other call gets t,
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

// WithNormalizer sets the rules the adapter applies to failures that reach
// it unnormalized (the chain has no middleware.Normalize, or a failure
// arises outside it). Use the same normalizer as the chain's
// middleware.Normalize. Default: errs.Normalizer{}.
func WithNormalizer(n errs.Normalizer) Option {
	return func(c *config) { c.normalizer = n }
}

// WithFallbackLogger sets where the adapter reports a panic that escaped the
// whole chain (no middleware.Recover in it), a runtime.Goexit during a call,
// and a result the chain returned that cannot be encoded: the value and the
// stack are logged there, server-side, and the client gets the generic
// message.
// (Put middleware.Recover innermost in the chain so that the chain's own
// hooks see panics as failures.)
// Default: slog.Default().
func WithFallbackLogger(l *slog.Logger) Option {
	return func(c *config) { c.fallback = l }
}

// Install adds [Middleware](m, opts...) to s as a receiving middleware. Call
// it once per server. Each [mcp.Server.AddReceivingMiddleware] wraps the
// handler as it is at that moment, so the middleware added last is the
// outermost: add a receiving middleware that must run outside toolmw (and
// see what toolmw answers) after Install, and one that must run inside it,
// closer to the tool, before Install.
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
//   - the SDK's own input-validation failure of a typed tool (the
//     arguments fail the tool's input schema, so the tool's function was
//     not entered): an [errs.CodeInvalidArguments] failure whose public
//     message is the adapter's validation message of those arguments (it
//     describes only what the caller sent);
//   - an isError result without GetError (a handler's own): public as is;
//   - a Go error (a raw handler's error, an output-schema failure, an
//     error from SDK middleware inside this one, a [*jsonrpc.Error] returned
//     by a handler, whatever its code and text): a failure whose raw cause
//     is that error; except a handler's URL elicitation, which passes (see
//     the package documentation);
//   - a result that cannot be encoded as JSON: a failure whose raw cause
//     says why;
//   - a panic in the SDK or the handler: a failure whose cause is an
//     [*errs.PanicError];
//   - the SDK's refusal of a tool that is not in the server's tool table:
//     an [errs.CodeUnknownTool] failure; if the chain lets it through, the
//     client gets an unknown-tool protocol error. The chain does run for
//     unknown tools, so guards and audit see the attempt.
//
// The chain's result is then normalized ([toolctx.Normalized], default
// rules) and written back with public fields only; a failure carries its
// code and public detail under _meta[[toolctx.ErrorMetaKey]]. A successful
// result the chain did not replace goes back exactly as the SDK produced it.
// The chain runs on a coroutine of its own (iter.Pull's machinery: no
// thread is woken for it): a panic that escapes it is
// recovered as a last resort, and a runtime.Goexit in it ends the call as
// an internal failure (see [WithFallbackLogger]). When the client cancelled the call, the SDK still
// writes a response; the adapter makes it a content-free canceled result,
// whatever the handler returned late.
func Middleware(m toolctx.Middleware, opts ...Option) mcp.Middleware {
	cfg := newConfig(opts)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		t := terminal{next: next}
		if !cfg.noSchemaCache {
			t.schemas = new(schemaCache)
		}
		var h toolctx.Handler = t
		if m != nil {
			h = m(h)
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != methodCallTool {
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

// call is the adapter's state for one tools/call. The chain runs in ctx
// carrying the call under callKey and as the chain's
// toolctx.ResultChecker (see run).
type call struct {
	ctx context.Context // the SDK's, as fill returned it
	req toolctx.Request
	sdk *mcp.CallToolRequest

	// notifier is the call's toolctx.Notifier, in the chain's context.
	notifier notifier

	runs  atomic.Int32
	first invocation                 // the terminal's first run, without an allocation
	last  atomic.Pointer[invocation] // the terminal's latest run

	// The chain's run, contained (see run).
	h         toolctx.Handler
	cfg       *config
	out       mcp.Result       // what the SDK gets
	outErr    error            // (a protocol error)
	escaped   *errs.PanicError // or the panic or Goexit that ended run
	finishing bool             // run was in finish when it ended so

	// checked is the last result CheckResult encoded (for the chain's
	// hooks, through toolctx.Sendable), so that finish does not encode it
	// again.
	checked atomic.Pointer[checkedResult]
}

// checkedResult is a chain's result as the adapter encoded it for the SDK.
type checkedResult struct {
	res *toolctx.CallResult
	out *mcp.CallToolResult
	err error
}

// invocation is one run of the terminal handler (a retrying interceptor may
// run it more than once). The context the SDK runs the tool in carries it
// under invocationKey.
type invocation struct {
	req *toolctx.Request // as the terminal received it

	sdkResult *mcp.CallToolResult // what the SDK returned, if a result
	passed    *toolctx.CallResult // conversion of a successful sdkResult (points to ok)
	ok        toolctx.CallResult
	proto     *protocolError      // an SDK protocol error to pass through
	direct    *toolctx.CallResult // the result of a tool added with AddTool, when hasDirect
	hasDirect bool
	wire      *mcp.CallToolResult // the encoded form of wireFor, a direct success
	wireFor   *toolctx.CallResult
}

// protocolError is an SDK protocol error the client gets unchanged when the
// chain lets the failure through: its public side is pub.
type protocolError struct {
	pub  *errs.Error
	wire *jsonrpc.Error
}

func (e *protocolError) Error() string { return e.pub.Error() }
func (e *protocolError) Unwrap() error { return e.pub }

var (
	errLostCall     = errors.New("mcpsdk: the call's state is missing from the context (an interceptor replaced the context instead of deriving from it)")
	errNilSDKResult = errors.New("mcpsdk: the SDK returned neither a result nor an error")
)

func (cfg *config) serve(ctx context.Context, h toolctx.Handler, sreq *mcp.CallToolRequest) (result mcp.Result, err error) {
	c := &call{sdk: sreq, h: h, cfg: cfg}
	c.ctx = cfg.fill(ctx, &c.req, sreq)
	c.notifier.sdkCtx, c.notifier.sreq = ctx, sreq
	if v, escaped := contain.Run(c.run); escaped {
		c.escaped = escapedPanic(v)
	}
	// The chain has returned: nothing more is sent about the call (a
	// goroutine the handler left behind gets toolctx.ErrCallEnded).
	c.notifier.gate.End()
	if c.escaped == nil {
		return c.out, c.outErr
	}
	cfg.logEscaped(ctx, &c.req, c.escaped, true)
	if c.finishing {
		// Encoding what the chain returned panicked or called Goexit.
		return failureResult(errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}), nil
	}
	defer func() {
		// finish runs on the SDK's goroutine here, where a panic would
		// end the server: the last resort.
		if v := recover(); v != nil {
			cfg.logEscaped(ctx, &c.req, errs.NewPanicError(v), true)
			result, err = failureResult(errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}), nil
		}
	}()
	return cfg.finish(ctx, c, toolctx.ErrorResult(c.escaped))
}

// run runs the chain for c, and turns its result into the SDK's, contained
// (serve calls it through internal/contain), because a runtime.Goexit in
// the chain (what t.FailNow does), or in a MarshalJSON the result's
// encoding calls, cannot be stopped: it would end the SDK's goroutine for
// the request, which then never answers, and on HTTP keeps the session
// from closing. Contained, it ends only run's coroutine, and serve records
// it. A panic that escaped the chain (no middleware.Recover in it) is
// recorded the same way.
func (c *call) run() {
	growStack()
	chainCtx := toolctx.WithResultChecker(context.WithValue(c.ctx, callKey{}, c), c)
	res := c.h.CallTool(toolctx.WithNotifier(chainCtx, &c.notifier), &c.req)
	c.finishing = true
	c.out, c.outErr = c.cfg.finish(c.ctx, c, res)
}

// escapedPanic is the cause of a contained function (contain.Run) that
// ended without returning: v is what recover returned, nil for a Goexit.
// (A panic(nil) recovers as a *runtime.PanicNilError since Go 1.21; under
// GODEBUG=panicnil=1 it is taken for a Goexit, which ends the same way.)
func escapedPanic(v any) *errs.PanicError {
	if v == nil {
		v = errs.ErrGoexit
	}
	return errs.NewPanicError(v)
}

// logEscaped reports a panic or Goexit that escaped the whole chain to the
// fallback logger, with its stack: the chain's own hooks may not have seen
// it.
func (cfg *config) logEscaped(ctx context.Context, req *toolctx.Request, pe *errs.PanicError, inChain bool) {
	msg := "toolmw/mcpsdk: a panic escaped the middleware chain; add middleware.Recover to the chain"
	if !inChain {
		msg = "toolmw/mcpsdk: a tool panicked"
	}
	if pe.Value == errs.ErrGoexit {
		msg = "toolmw/mcpsdk: runtime.Goexit was called during a tool call; the call ends as an internal failure"
	}
	cfg.logger().ErrorContext(ctx, msg, "panic", pe.Error(), "call", toolctx.DetailsOf(req), "stack", string(pe.Stack))
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
			return inv.sdkResult, nil // encoded by the terminal
		}
		if inv.wire != nil && res == inv.wireFor {
			return inv.wire, nil // encoded by the terminal
		}
	}
	var out *mcp.CallToolResult
	var err error
	if m := c.checked.Load(); m != nil && m.res == res {
		out, err = m.out, m.err // encoded for the chain's hooks already
	} else {
		out, err = c.encodeAnswer(inv, res)
	}
	if err != nil {
		// A result an interceptor made (or a public detail) that cannot be
		// encoded, which no hook in the chain checked (toolctx.Sendable):
		// this is the last place to keep the call from hanging.
		cfg.logger().ErrorContext(ctx, "toolmw/mcpsdk: the chain's result cannot be encoded; the client gets an internal failure",
			"error", err.Error(), "call", toolctx.DetailsOf(&c.req))
		pub, _ := errs.Normalize(err)
		return failureResult(pub), nil
	}
	return out, nil
}

// encodeAnswer is what the SDK gets for the chain's result res (not one
// the terminal encoded already): its normalized public fields, encoded.
func (c *call) encodeAnswer(inv *invocation, res *toolctx.CallResult) (*mcp.CallToolResult, error) {
	var shell *mcp.CallToolResult
	if inv != nil {
		shell = inv.sdkResult
	}
	return wireResult(shell, toolctx.Normalized(c.ctx, res, c.cfg.normalizer))
}

// CheckResult implements toolctx.ResultChecker for the chain's hooks: it
// returns why the SDK could not send res, encoding it as finish would (once:
// finish reuses the encoding). The terminal's own results are checked by
// the terminal already. Normalizing calls the cause's methods, which may
// panic: that is returned as the reason.
func (c *call) CheckResult(res *toolctx.CallResult) (err error) {
	if m := c.checked.Load(); m != nil && m.res == res {
		return m.err
	}
	inv := c.last.Load()
	if inv != nil && res != nil {
		if (inv.proto != nil && res.IsError && res.Cause() == error(inv.proto)) ||
			(inv.passed != nil && res == inv.passed) || (inv.wire != nil && res == inv.wireFor) {
			return nil
		}
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %w", errUnencodable, errs.NewPanicError(v))
		}
	}()
	out, err := c.encodeAnswer(inv, res)
	c.checked.Store(&checkedResult{res: res, out: out, err: err})
	return err
}

// encode checks that res, which the terminal is about to hand the chain,
// can be sent, and encodes its structured content once for the SDK (see
// encodeResult). A result that cannot be encoded becomes a raw failure,
// which the chain scrubs and reports like any other.
func (inv *invocation) encode(ctx context.Context, res *toolctx.CallResult) *toolctx.CallResult {
	var err error
	switch {
	case res == nil || res.Cause() != nil || res.Error != nil:
		// A failure: the envelope the adapter writes is checked by finish.
		return res
	case res == inv.passed:
		if inv.sdkResult, err = encodeResult(inv.sdkResult); err != nil {
			inv.passed = nil
			return toolctx.ErrorResult(err)
		}
		return res
	case !res.IsError:
		// A tool added with AddTool: what finish would write.
		if inv.wire, err = wireResult(inv.sdkResult, res); err != nil {
			return toolctx.ErrorResult(err)
		}
		inv.wireFor = res
		return res
	}
	// A handler's own isError result: the client gets its content.
	if _, err = wireResult(nil, toolctx.Normalized(ctx, res, errs.Normalizer{})); err != nil {
		return toolctx.ErrorResult(err)
	}
	return res
}

// terminal is the handler at the end of the chain: it calls the SDK.
type terminal struct {
	next mcp.MethodHandler
	// schemas caches the tools' compiled input schemas (nil: none).
	schemas *schemaCache
}

func (t terminal) CallTool(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return toolctx.ErrorResult(errLostCall)
	}
	sreq := c.sdk
	if req != &c.req && (!bytes.Equal(req.Arguments, c.req.Arguments) || req.RequestState != c.req.RequestState) {
		// An interceptor passed a request with other arguments, or
		// another request state (one it unsealed): the tool gets those.
		p := *sreq.Params
		p.Arguments = req.Arguments
		p.RequestState = req.RequestState
		r := *sreq
		r.Params = &p
		sreq = &r
	}
	inv := &c.first
	if c.runs.Add(1) > 1 {
		inv = new(invocation) // a retry, perhaps concurrent with the first run
	}
	inv.req = req
	defer func() {
		if v := recover(); v != nil {
			res = toolctx.ErrorResult(errs.NewPanicError(v))
		}
		c.last.Store(inv)
	}()
	ictx := context.WithValue(ctx, invocationKey{}, inv)
	out, err := t.next(ictx, methodCallTool, sreq)
	res = inv.encode(ctx, inv.convert(ictx, t, sreq, out, err))
	if cerr := ctx.Err(); cerr != nil && (res == nil || res.Cause() == nil) {
		// The call was cancelled or ran out of time while the SDK ran it:
		// a late success (or a handler's own isError result) is replaced
		// by why, so the chain sees a canceled or timed-out call. A late
		// failure keeps its cause, for the audit row: the chain still
		// classifies it as canceled or timed out, scrubbed.
		return toolctx.ErrorResult(cerr)
	}
	return res
}

// convert turns what the SDK returned for sreq into the chain's result
// (see Middleware). Where a failure arose is decided in origin.go.
func (inv *invocation) convert(ctx context.Context, t terminal, sreq *mcp.CallToolRequest, res mcp.Result, err error) *toolctx.CallResult {
	r, _ := res.(*mcp.CallToolResult)
	if inv.hasDirect {
		if err != nil {
			return toolctx.ErrorResult(err)
		}
		inv.sdkResult = r
		if d := inv.direct; d != nil && d.IsError && d.Error == nil {
			if pe, ok := urlElicitationRequired(d.Cause()); ok {
				inv.proto = pe
				return toolctx.ErrorResult(pe)
			}
		}
		return inv.direct
	}
	if err != nil {
		if pe, ok := t.unknownTool(ctx, sreq, err); ok {
			inv.proto = pe
			return toolctx.ErrorResult(pe)
		}
		if pe, ok := urlElicitationRequired(err); ok {
			inv.proto = pe
			return toolctx.ErrorResult(pe)
		}
		return toolctx.ErrorResult(err)
	}
	if r == nil {
		return toolctx.ErrorResult(errNilSDKResult)
	}
	inv.sdkResult = r
	if r.IsError {
		ge := r.GetError()
		if ge == nil {
			// The handler's own isError result: its content is public.
			return &toolctx.CallResult{IsError: true, Content: fromSDKContent(r.Content), StructuredContent: r.StructuredContent, Meta: r.Meta}
		}
		if pub, ok := t.inputValidation(ctx, sreq, ge); ok {
			return toolctx.ErrorResult(pub)
		}
		return toolctx.ErrorResult(ge)
	}
	inv.ok = toolctx.CallResult{Content: fromSDKContent(r.Content), StructuredContent: r.StructuredContent, Meta: r.Meta}
	if r.InputRequests != nil {
		// A handler's input-required result (the SDK has already refused
		// one that also has content).
		ir, err := inputRequiredFromSDK(r)
		if err != nil {
			return toolctx.ErrorResult(fmt.Errorf("%w: input requests: %w", errUnencodable, err))
		}
		inv.ok = toolctx.CallResult{InputRequired: ir, Meta: r.Meta}
	}
	inv.passed = &inv.ok
	return inv.passed
}

// fill sets req from what the SDK exposes, and returns the context the chain
// runs in: ctx, or, on a stateful streamable HTTP session (where ctx is the
// context of the request that created the session), ctx carrying this
// call's identity and request id, or none, so that toolctx.IdentityFrom and
// RequestIDFrom in the chain agree with r and are never the session
// creator's.
func (cfg *config) fill(ctx context.Context, r *toolctx.Request, sreq *mcp.CallToolRequest) context.Context {
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
	r.InputResponses, r.RequestState = inputResponses(p.InputResponses), p.RequestState
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
	} else if ss, ok := ctx.Value(sseKey{}).(*sseSession); ok {
		// A session opened through SSE: the context is that of its GET.
		r.Transport = toolctx.TransportSSE
		r.SessionID = ss.sessionID()
		ctxIsPerRequest = false
	}
	if ctxIsPerRequest {
		if id := toolctx.IdentityFrom(ctx); id != nil {
			r.Identity = id
		}
		if rid := toolctx.RequestIDFrom(ctx); rid != "" {
			r.RequestID = rid
		}
		return ctx
	}
	var id toolctx.Identity // the zero Identity hides the creator's
	if r.Identity != nil {
		id = *r.Identity
	}
	return toolctx.WithRequestID(toolctx.WithIdentity(ctx, id), r.RequestID)
}

// toSDKResult writes r's public fields into an SDK result. shell, when set,
// is the result the SDK produced for this call: copying it keeps the SDK's
// private bookkeeping (its result type) without its content.
func toSDKResult(shell *mcp.CallToolResult, r *toolctx.CallResult) (*mcp.CallToolResult, error) {
	if r.NeedsInput() {
		return inputRequiredToSDK(r)
	}
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
	return out, nil
}

// wireResult is r as the SDK sends it (toSDKResult), encoded (encodeResult).
func wireResult(shell *mcp.CallToolResult, r *toolctx.CallResult) (*mcp.CallToolResult, error) {
	out, err := toSDKResult(shell, r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnencodable, err)
	}
	return encodeResult(out)
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
