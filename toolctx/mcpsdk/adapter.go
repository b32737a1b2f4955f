package mcpsdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

const methodCallTool = "tools/call"

// Option configures [Middleware], [Install], [AddTool] and [AddTypedTool]:
// the kit's options (see package toolctx/adapter), re-exported.
type Option = adapter.Option

// The options, as the kit describes them. The adapter detects streamable
// HTTP, and SSE behind [SSE]; every other call gets WithTransport's, or
// [toolctx.TransportUnknown].
var (
	WithTransport      = adapter.WithTransport
	WithNormalizer     = adapter.WithNormalizer
	WithFallbackLogger = adapter.WithFallbackLogger
)

const adapterName = "toolmw/mcpsdk"

func mustConfig(ctor string, opts []Option) *adapter.Config {
	return adapter.MustConfig(adapterName, "mcpsdk."+ctor, opts...)
}

// Install adds [Middleware](m, opts...) to s as a receiving middleware,
// once per server. The receiving middleware added last is outermost: add
// one that must see what toolmw answers after Install, one that must run
// closer to the tool before. An option given a value it cannot use panics.
func Install(s *mcp.Server, m toolctx.Middleware, opts ...Option) {
	s.AddReceivingMiddleware(middleware(m, true, mustConfig("Install", opts)))
}

// Middleware returns an SDK receiving middleware that runs m around every
// tools/call of the server, whatever registered the tool; other methods
// pass through. A nil m runs no interceptor but keeps the adapter's rules.
// The SDK's answer becomes the chain's [*toolctx.CallResult] (a typed
// handler's error, a Go error, a panic, an unencodable result: a failure
// with that raw cause; the SDK's refusal of an unknown tool or of invalid
// arguments: a public failure), and the chain's result is normalized and
// written back with public fields only; a success the chain did not
// replace goes back as the SDK produced it. The chain runs contained, as
// [adapter.Call.Serve] describes. See docs/adapters/mcpsdk.md for each
// case. An option given a value it cannot use panics.
func Middleware(m toolctx.Middleware, opts ...Option) mcp.Middleware {
	return middleware(m, true, mustConfig("Middleware", opts))
}

// middleware is Middleware, with the input-schema cache or without it
// (tests and benchmarks compare).
func middleware(m toolctx.Middleware, cache bool, cfg *adapter.Config) mcp.Middleware {
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
			cctx := fill(cfg, ctx, &c.Request, sreq)
			c.hidden = cfg.Hidden(&c.Request)
			r := c.Serve(cctx, cfg, h, c, &c.sender)
			if r.proto != nil {
				return nil, r.proto
			}
			return r.out, nil
		}
	}
}

// call is one tools/call: the codec of its adapter.Call (adapter.CodecFrom).
type call struct {
	adapter.Call[reply]
	cfg    *adapter.Config
	sdk    *mcp.CallToolRequest
	sender sender
	hidden bool // WithVisibility hides the tool: answered as unknown

	runs adapter.Invocations[invocation]
}

// reply is what the SDK gets: a result, or a protocol error passed through.
type reply struct {
	out   *mcp.CallToolResult
	proto *jsonrpc.Error
}

// invocation is the state of one run of the terminal handler, which the
// tool's context carries (adapter.InvocationFrom).
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

// protocolError is an SDK protocol error the client gets when the chain
// lets the failure through; pub is its public side.
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

// Encode implements adapter.Codec; the terminal's own results are encoded
// already.
func (c *call) Encode(ctx context.Context, res *toolctx.CallResult) (reply, error) {
	if c.hidden {
		return reply{proto: unknownTool(c.Request.Tool).wire}, nil
	}
	var shell *mcp.CallToolResult
	if run := c.runs.Last(); run != nil {
		inv := &run.State
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

// encode checks that res, which the terminal hands the chain, can be sent,
// encoding it once for the SDK: one that cannot becomes a raw failure.
func (inv *invocation) encode(ctx context.Context, res *toolctx.CallResult) *toolctx.CallResult {
	var err error
	switch {
	case res == nil || res.Cause() != nil || res.Error != nil:
		return res
	case res == inv.passed:
		if inv.sdkResult, err = encodeResult(inv.sdkResult); err != nil {
			inv.passed = nil
			return toolctx.ErrorResult(err)
		}
		return res
	case !res.IsError: // a tool added with AddTool
		if inv.wire, err = wireResult(inv.sdkResult, res); err != nil {
			return toolctx.ErrorResult(err)
		}
		inv.wireFor = res
		return res
	}
	// A handler's own isError result, whose content the client gets.
	if _, err = wireResult(nil, toolctx.Normalized(ctx, res, errs.Normalizer{})); err != nil {
		return toolctx.ErrorResult(err)
	}
	return res
}

type terminal struct {
	next    mcp.MethodHandler
	schemas *schemaCache // nil: compile each time
}

func (t terminal) CallTool(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	c, _ := adapter.CodecFrom[reply](ctx).(*call)
	if c == nil {
		return toolctx.ErrorResult(errLostCall)
	}
	if c.hidden {
		return toolctx.ErrorResult(unknownTool(c.Request.Tool))
	}
	sreq := c.sdk
	if req != &c.Request && (!bytes.Equal(req.Arguments.JSON(), c.Request.Arguments.JSON()) || req.RequestState != c.Request.RequestState) {
		// An interceptor changed the arguments or the request state.
		p := *sreq.Params
		p.Arguments = req.Arguments.JSON()
		p.RequestState = req.RequestState
		r := *sreq
		r.Params = &p
		sreq = &r
	}
	run := c.runs.Start(ctx)
	inv := &run.State
	inv.req = req
	res := adapter.Native(func() *toolctx.CallResult {
		out, err := t.next(run, methodCallTool, sreq)
		return inv.encode(ctx, inv.convert(run, t, sreq, out, err))
	})
	c.runs.Done(run)
	if cerr := ctx.Err(); cerr != nil && (res == nil || res.Cause() == nil) {
		// A late success becomes why the call ended; a late failure
		// keeps its cause for the row (classified canceled or timeout).
		return toolctx.ErrorResult(cerr)
	}
	return res
}

// convert turns what the SDK returned for sreq into the chain's result;
// origin.go decides where a failure arose.
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
			return &toolctx.CallResult{IsError: true, Content: fromSDKContent(r.Content), StructuredContent: r.StructuredContent, Meta: r.Meta}
		}
		if pub, ok := t.inputValidation(ctx, sreq, ge); ok {
			return toolctx.ErrorResult(pub)
		}
		return toolctx.ErrorResult(ge)
	}
	inv.ok = toolctx.CallResult{Content: fromSDKContent(r.Content), StructuredContent: r.StructuredContent, Meta: r.Meta}
	if r.InputRequests != nil {
		ir, err := inputRequiredFromSDK(r)
		if err != nil {
			return toolctx.ErrorResult(fmt.Errorf("%w: input requests: %w", errUnencodable, err))
		}
		inv.ok = toolctx.CallResult{InputRequired: ir, Meta: r.Meta}
	}
	inv.passed = &inv.ok
	return inv.passed
}

// fill sets r from what the SDK exposes and returns the chain's context:
// ctx, or, where ctx is a session's (stateful streamable HTTP, SSE), ctx
// carrying this call's identity and request id, never the session's.
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

// identify sets r's transport, session, identity and request id from a
// request's session and Extra (tools/call and tools/list alike); it reports
// whether ctx is this request's, and not the session's.
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

// toSDKResult writes r's public fields into an SDK result; copying shell,
// the SDK's result of the call, keeps its private result type.
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
		maps.Copy(meta, r.Meta)
	}
	if r.IsError && r.Error != nil {
		meta[toolctx.ErrorMetaKey] = adapter.ErrorMeta(*r.Error)
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

// failureResult is a content-free failure with only pub.
func failureResult(pub errs.Public) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: pub.Message}},
		Meta:    mcp.Meta{toolctx.ErrorMetaKey: adapter.ErrorMeta(pub)},
	}
}
