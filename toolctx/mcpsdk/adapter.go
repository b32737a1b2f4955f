package mcpsdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// methodCallTool is the MCP method the adapter intercepts. Every other method
// goes straight to the SDK.
const methodCallTool = "tools/call"

// Option configures [Middleware], [Install], [AddTool] and [AddTypedTool]:
// the kit's options (see package toolctx/adapter), re-exported.
type Option = adapter.Option

// The options, as [adapter.WithTransport], [adapter.WithNormalizer] and
// [adapter.WithFallbackLogger] describe them. The SDK does not tell a
// handler which transport a call came on: the adapter detects streamable
// HTTP (the one transport that sets the request's Extra) and SSE behind
// [SSE]; every other call gets WithTransport's, or
// [toolctx.TransportUnknown]. Use one server (and one Install) per
// transport when the distinction matters.
var (
	WithTransport      = adapter.WithTransport
	WithNormalizer     = adapter.WithNormalizer
	WithFallbackLogger = adapter.WithFallbackLogger
)

func newConfig(opts []Option) *adapter.Config {
	return adapter.NewConfig("toolmw/mcpsdk", opts...)
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
// The chain runs contained, as [adapter.Call.Serve] describes: a panic
// that escapes it is recovered as a last resort, a runtime.Goexit in it
// ends the call as an internal failure (see [WithFallbackLogger]), and a
// call the client cancelled gets a content-free canceled result (the SDK
// writes a response even then), whatever the handler returned late.
func Middleware(m toolctx.Middleware, opts ...Option) mcp.Middleware {
	return middleware(m, true, opts)
}

// middleware is Middleware, with the input-schema cache or without it
// (tests and benchmarks compare).
func middleware(m toolctx.Middleware, cache bool, opts []Option) mcp.Middleware {
	cfg := newConfig(opts)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		t := terminal{next: next}
		if cache {
			t.schemas = new(schemaCache)
		}
		var h toolctx.Handler = t
		if m != nil {
			h = m(h)
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == methodListTools && cfg.Visible != nil {
				return listVisible(ctx, cfg, next, method, req)
			}
			if method != methodCallTool {
				return next(ctx, method, req)
			}
			sreq, ok := req.(*mcp.CallToolRequest)
			if !ok || sreq == nil || sreq.Params == nil {
				return next(ctx, method, req)
			}
			c := &call{sdk: sreq, cfg: cfg, sender: sender{sdkCtx: ctx, sreq: sreq}}
			chainCtx := context.WithValue(fill(cfg, ctx, &c.Request, sreq), callKey{}, c)
			c.hidden = cfg.Hidden(&c.Request)
			r := c.Serve(chainCtx, cfg, h, c, &c.sender)
			if r.proto != nil {
				return nil, r.proto
			}
			return r.out, nil
		}
	}
}

type callKey struct{}

type invocationKey struct{}

// call is the adapter's state for one tools/call, in the chain's context
// under callKey.
type call struct {
	adapter.Call[reply]
	cfg    *adapter.Config
	sdk    *mcp.CallToolRequest
	sender sender
	// hidden: the caller may not see the tool (WithVisibility); it is
	// answered as an unknown tool whatever the chain returns.
	hidden bool

	runs  atomic.Int32
	first invocation                 // the terminal's first run, without an allocation
	last  atomic.Pointer[invocation] // the terminal's latest run
}

// reply is what the SDK gets: a result, or a protocol error passed through.
type reply struct {
	out   *mcp.CallToolResult
	proto *jsonrpc.Error
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

// Encode implements adapter.Codec: what the SDK gets for the chain's
// result res. The terminal's own results were encoded by the terminal.
func (c *call) Encode(ctx context.Context, res *toolctx.CallResult) (reply, error) {
	if c.hidden {
		return reply{proto: unknownTool(c.Request.Tool).wire}, nil
	}
	inv := c.last.Load()
	var shell *mcp.CallToolResult
	if inv != nil {
		switch {
		case res == nil:
		case inv.proto != nil && res.IsError && res.Cause() == error(inv.proto):
			return reply{proto: inv.proto.wire}, nil
		case inv.passed != nil && res == inv.passed:
			return reply{out: inv.sdkResult}, nil
		case inv.wire != nil && res == inv.wireFor:
			return reply{out: inv.wire}, nil
		}
		shell = inv.sdkResult
	}
	if shell == nil || shell.InputRequests != nil {
		shell = completeShell(c.sdk.Session) // see resulttype.go
	}
	out, err := wireResult(shell, toolctx.Normalized(ctx, res, c.cfg.Normalizer))
	return reply{out: out}, err
}

// Failure implements adapter.Codec.
func (c *call) Failure(pub errs.Public) reply {
	if c.hidden {
		return reply{proto: unknownTool(c.Request.Tool).wire}
	}
	return reply{out: withResultType(c.sdk.Session, failureResult(pub))}
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

func (t terminal) CallTool(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return toolctx.ErrorResult(errLostCall)
	}
	if c.hidden {
		return toolctx.ErrorResult(unknownTool(c.Request.Tool))
	}
	sreq := c.sdk
	if req != &c.Request && (!bytes.Equal(req.Arguments.JSON(), c.Request.Arguments.JSON()) || req.RequestState != c.Request.RequestState) {
		// An interceptor passed a request with other arguments, or
		// another request state (one it unsealed): the tool gets those.
		p := *sreq.Params
		p.Arguments = req.Arguments.JSON()
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
	ictx := context.WithValue(ctx, invocationKey{}, inv)
	res := adapter.Native(func() *toolctx.CallResult {
		out, err := t.next(ictx, methodCallTool, sreq)
		return inv.encode(ctx, inv.convert(ictx, t, sreq, out, err))
	})
	c.last.Store(inv)
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
func fill(cfg *adapter.Config, ctx context.Context, r *toolctx.Request, sreq *mcp.CallToolRequest) context.Context {
	p := sreq.Params
	r.Tool = p.Name
	r.Arguments = toolctx.RawArguments(p.Arguments)
	r.CallID = adapter.NewCallID()
	if len(p.Meta) > 0 {
		r.Meta = p.Meta
	}
	r.InputResponses, r.RequestState = adapter.RawValues(p.InputResponses), p.RequestState
	if identify(cfg, ctx, r, sreq.Session, sreq.Extra) {
		return ctx
	}
	var id toolctx.Identity // the zero Identity hides the creator's
	if r.Identity != nil {
		id = *r.Identity
	}
	return toolctx.WithRequestID(toolctx.WithIdentity(ctx, id), r.RequestID)
}

// identify sets r's transport, session, identity and request id from what
// the SDK exposes of a request (its session and, on streamable HTTP, its
// Extra), for a tools/call and a tools/list alike. It reports whether ctx
// belongs to this request: false on a stateful streamable HTTP session or
// an SSE session, where ctx is the context of the request that opened the
// session and its identity and request id are not this caller's.
func identify(cfg *adapter.Config, ctx context.Context, r *toolctx.Request, session *mcp.ServerSession, extra *mcp.RequestExtra) (perRequest bool) {
	r.Transport = cfg.Transport
	if r.Transport == "" {
		r.Transport = toolctx.TransportUnknown
	}
	if session != nil {
		r.SessionID = session.ID()
	}
	perRequest = true
	if extra != nil {
		// Only the streamable HTTP transport sets Extra.
		r.Transport = toolctx.TransportStreamableHTTP
		r.Header = extra.Header
		if ti := extra.TokenInfo; ti != nil {
			r.Identity = &toolctx.Identity{Subject: ti.UserID, Scopes: ti.Scopes}
			if rid, ok := ti.Extra[tokenInfoRequestIDKey].(string); ok {
				r.RequestID = rid
			}
		}
		perRequest = r.SessionID == ""
	} else if ss, ok := ctx.Value(sseKey{}).(*sseSession); ok {
		// A session opened through SSE: the context is that of its GET.
		r.Transport = toolctx.TransportSSE
		r.SessionID = ss.sessionID()
		perRequest = false
	}
	if perRequest {
		if id := toolctx.IdentityFrom(ctx); id != nil {
			r.Identity = id
		}
		if rid := toolctx.RequestIDFrom(ctx); rid != "" {
			r.RequestID = rid
		}
	}
	return perRequest
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
