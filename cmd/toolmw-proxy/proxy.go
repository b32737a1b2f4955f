package main

//lint:file-ignore SA1019 MCP logging and sampling are deprecated as of protocol 2026-07-28 (SEP-2577) but still served: the proxy forwards them for the upstreams and clients that use them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/toolctx"
)

// proxy is the MCP server the clients see: the upstream's tools mirrored
// in its tool table (so that the toolmw adapter knows them, and tools/list
// is the SDK's own), and everything else forwarded to the upstream as it
// is: resources, resource templates, prompts, completions, subscriptions,
// the logging level; the upstream's notifications (progress, log messages,
// list changes, resource updates) and requests (sampling, elicitation)
// forwarded to the clients.
type proxy struct {
	up     *upstream                  // set once the first generation is up
	server atomic.Pointer[mcp.Server] // set once the first generation is up
	logger *slog.Logger

	toolsMu sync.Mutex
	tools   map[string][]byte // the mirrored tools, as the upstream described them

	progressSeq atomic.Int64
	progress    sync.Map // upstream progress token (string) -> *progressRoute (progress.go)

	callsMu  sync.Mutex
	calls    []*inFlight // the calls in flight, oldest first
	routeSeq atomic.Int64
	// httpUpstream: the upstream is streamable HTTP, whose requests to a
	// client travel on their call's stream (route.go).
	httpUpstream bool

	subsMu sync.Mutex
	subs   map[string]int // resource URI -> subscribed client sessions

	// The calls parked by the bridge (bridge.go), by their request state,
	// resumeTimeout and maxParked at most.
	parkedMu      sync.Mutex
	parked        map[string]*parked
	parkedClosed  bool
	resumeTimeout time.Duration
	maxParked     int
	// rows, when set, gets the row of a parked call that ends with no
	// round of its client's to tell (bridge.go, endParked).
	rows audit.Emitter

	// visibleTo, when set, is the scope guard's visibility
	// (middleware.Visibility): tools/list shows a caller only the tools the
	// guard would let it call, and every tool when it is observed.
	visibleTo func(*toolctx.Request) bool
}

func newProxy(logger *slog.Logger) *proxy {
	return &proxy{logger: logger, tools: map[string][]byte{}, subs: map[string]int{}, parked: map[string]*parked{},
		resumeTimeout: defaultResume, maxParked: defaultMaxParked}
}

// clientOptions are the handlers of the proxy's client to the upstream.
func (p *proxy) clientOptions(logger *slog.Logger) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Logger: logger,
		// No roots: the proxy does not forward the clients' roots.
		Capabilities: &mcp.ClientCapabilities{},
		// An upstream's input-required answer (multi round-trip
		// requests, protocol 2026-07-28) is the client's to fulfil
		// (mrtr.go). go-sdk's client would fulfil it with the handlers
		// below, whose requests to a client on 2026-07-28 go-sdk's server
		// refuses to send.
		MultiRoundTrip:             &mcp.MultiRoundTripOptions{Disabled: true},
		CreateMessageHandler:       p.createMessage,
		ElicitationHandler:         p.elicit,
		ElicitationCompleteHandler: p.elicitationComplete,
		ToolListChangedHandler: func(ctx context.Context, r *mcp.ToolListChangedRequest) {
			if err := p.syncTools(ctx, r.Session); err != nil {
				p.logger.Warn("upstream: cannot read its tools after its list changed", "err", err)
			}
		},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { p.listChanged("prompt") },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { p.listChanged("resource") },
		ResourceUpdatedHandler: func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			if s := p.server.Load(); s != nil {
				_ = s.ResourceUpdated(ctx, r.Params)
			}
		},
		LoggingMessageHandler:       p.logMessage,
		ProgressNotificationHandler: p.progressNotification,
	}
}

// serverOptions are the proxy server's: the upstream's capabilities, and
// the handlers that forward completions and subscriptions.
func (p *proxy) serverOptions(init *mcp.InitializeResult, logger *slog.Logger) *mcp.ServerOptions {
	caps := init.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	c := *caps
	if c.Tools == nil {
		c.Tools = &mcp.ToolCapabilities{ListChanged: true}
	}
	if c.Resources != nil {
		r := *c.Resources
		r.ListChanged = true
		c.Resources = &r
	}
	if c.Prompts != nil {
		pr := *c.Prompts
		pr.ListChanged = true
		c.Prompts = &pr
	}
	o := &mcp.ServerOptions{Logger: logger, Instructions: init.Instructions, Capabilities: &c}
	if c.Completions != nil {
		o.CompletionHandler = func(ctx context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			g, err := p.up.current(ctx)
			if err != nil {
				return nil, p.protocolError("completion/complete", err)
			}
			res, err := g.session.Complete(ctx, r.Params)
			return res, p.protocolError("completion/complete", err)
		}
	}
	if c.Resources != nil && c.Resources.Subscribe {
		o.SubscribeHandler = p.subscribe
		o.UnsubscribeHandler = p.unsubscribe
	}
	return o
}

// syncTools mirrors the upstream's tools in the proxy's tool table: a tool
// that is new or changed is added, one that is gone is removed, so that a
// restart that changes nothing sends the clients no list change.
func (p *proxy) syncTools(ctx context.Context, s *mcp.ClientSession) error {
	p.toolsMu.Lock()
	defer p.toolsMu.Unlock()
	seen := map[string]bool{}
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		b, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		seen[t.Name] = true
		if bytes.Equal(p.tools[t.Name], b) {
			continue
		}
		if err := p.addTool(t); err != nil {
			p.logger.Warn("upstream: a tool the proxy cannot serve is left out", "tool", t.Name, "err", err)
			delete(seen, t.Name)
			continue
		}
		p.tools[t.Name] = b
	}
	var gone []string
	for name := range p.tools {
		if !seen[name] {
			gone = append(gone, name)
			delete(p.tools, name)
		}
	}
	if len(gone) > 0 {
		p.server.Load().RemoveTools(gone...)
	}
	return nil
}

// addTool registers t with the forwarding handler; the SDK panics on a
// tool it will not serve (an input schema that is not an object's).
func (p *proxy) addTool(t *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	p.server.Load().AddTool(t, p.callTool)
	return nil
}

// upstreamError is an upstream's JSON-RPC error answer to a tools/call:
// its text is raw (the chain scrubs it for the client; the row keeps it).
type upstreamError struct {
	wire *jsonrpc.Error
}

func (e *upstreamError) Error() string {
	s := fmt.Sprintf("the upstream answered with JSON-RPC error %d: %s", e.wire.Code, e.wire.Message)
	if len(e.wire.Data) > 0 {
		s += " (data: " + string(e.wire.Data) + ")"
	}
	return s
}

func (e *upstreamError) Unwrap() error { return e.wire }

// progressGrace is how long a call that has its result waits for the
// progress before it to be forwarded.
const progressGrace = 2 * time.Second

// codeURLElicitationRequired is the protocol's URL elicitation error,
// which the adapter passes to the client in its own well-checked shape.
const codeURLElicitationRequired = -32042

// callTool forwards one tools/call. What the upstream answers is what the
// client gets, through the chain: a result (an isError one is the tool's
// own feedback) as it is; a JSON-RPC error, a connection that failed or an
// upstream that is not running as a raw error, which the adapter scrubs.
// The call of a client on 2026-07-28 to an upstream below it is bridged
// (bridge.go): a request the upstream sends mid-call becomes an
// input-required answer.
func (p *proxy) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if strings.HasPrefix(req.Params.RequestState, bridgeStatePrefix) {
		return p.resumeBridged(ctx, req)
	}
	g, err := p.up.current(ctx)
	if err != nil {
		return nil, err
	}
	params := &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments,
		InputResponses: req.Params.InputResponses, RequestState: req.Params.RequestState}
	if len(req.Params.Arguments) == 0 {
		params.Arguments = nil
	}
	params.Meta = forwardMeta(req.Params.Meta)
	if bridges(req.Session, g) {
		return p.startBridged(ctx, req, g, params)
	}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		up := "toolmw-proxy-" + strconv.FormatInt(p.progressSeq.Add(1), 10)
		route := newProgressRoute(ctx, req.Session, tok)
		p.progress.Store(up, route)
		defer func() {
			// The progress sent before the result goes first (progress.go).
			route.drain(progressGrace)
			p.progress.Delete(up)
		}()
		params.SetProgressToken(up)
	}
	upctx := ctx
	if req.Session != nil {
		c := &inFlight{session: req.Session, ctx: ctx, key: p.newRouteKey()}
		p.enter(c)
		defer p.leave(c)
		upctx = context.WithValue(ctx, routeKey{}, c.key) // reaches the POST (route.go)
	}
	res, err := g.session.CallTool(upctx, params)
	for round := 1; err == nil && asksInput(req.Session, res.InputRequests); round++ {
		answers, ferr := fulfil(ctx, req.Session, res.InputRequests, round) // mrtr.go
		if ferr != nil {
			return nil, ferr
		}
		params = withInput(params, answers, res.RequestState).(*mcp.CallToolParams)
		res, err = g.session.CallTool(upctx, params)
	}
	return p.callResult(ctx, g, res, err)
}

// callResult is what the client's call ctx gets for the upstream's answer
// res, err (see callTool).
func (p *proxy) callResult(ctx context.Context, g *generation, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if err == nil {
		return res, nil
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		if wire.Code == codeURLElicitationRequired {
			return nil, wire
		}
		return nil, &upstreamError{wire: wire}
	}
	if ctx.Err() != nil {
		return nil, err
	}
	// Neither an answer nor a JSON-RPC error: the connection failed, or
	// the answer could not be read (go-sdk's client refuses a result it
	// cannot decode and keeps the connection). A ping tells which: it
	// fails at once on a connection that failed.
	if g.alive(ctx) {
		return nil, fmt.Errorf("the upstream's answer could not be read: %w", err)
	}
	// The connection failed: say why the upstream ended, once the manager
	// knows (the process's exit follows its closed pipe closely).
	if why, ok := g.endedWhy(2 * time.Second); ok {
		return nil, fmt.Errorf("the upstream ended during the call (%v): %w", why, err)
	}
	return nil, fmt.Errorf("the upstream's connection failed during the call: %w", err)
}

// forwardMeta is the client's _meta as the upstream gets it: without the
// protocol's own io.modelcontextprotocol/ keys (the proxy's client sets
// its own) and without the progress token (the proxy's replaces it).
func forwardMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if k == "progressToken" || strings.HasPrefix(k, "io.modelcontextprotocol/") {
			continue
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}

// inFlight is a call in flight: its client session, its context, in
// which the SDK sends a request to the client on that call's own stream,
// and its route key (route.go). A bridged call's (bridge) requests go to
// its bridge instead, from its first round until the upstream's call
// returns.
type inFlight struct {
	session *mcp.ServerSession
	ctx     context.Context
	key     string
	bridge  *bridgedCall
}

// enter and leave track the calls in flight, for routing the upstream's
// requests (sampling, elicitation) to their call (route.go).
func (p *proxy) enter(c *inFlight) {
	p.callsMu.Lock()
	p.calls = append(p.calls, c)
	p.callsMu.Unlock()
}

func (p *proxy) leave(c *inFlight) {
	p.callsMu.Lock()
	defer p.callsMu.Unlock()
	for i := len(p.calls) - 1; i >= 0; i-- {
		if p.calls[i] == c {
			p.calls = append(p.calls[:i], p.calls[i+1:]...)
			return
		}
	}
}

// createMessage, elicit and listRoots forward the upstream's request to
// the client of the call it belongs to (route.go): as a request of the
// client's protocol, or, to a client on 2026-07-28, through the bridge
// (bridge.go).
func (p *proxy) createMessage(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	params := *r.Params
	var key string
	params.Meta, key = p.takeRoute(params.Meta)
	return askClient(p, ctx, key, &params, (*mcp.ServerSession).CreateMessage)
}

func (p *proxy) elicit(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	params := *r.Params
	var key string
	params.Meta, key = p.takeRoute(params.Meta)
	return askClient(p, ctx, key, &params, (*mcp.ServerSession).Elicit)
}

// listRoots is the receiving middleware of the proxy's client that
// forwards the upstream's roots/list (go-sdk's client would answer it
// with its own roots, of which the proxy has none).
func (p *proxy) listRoots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.ListRootsRequest)
		if method != "roots/list" || !ok {
			return next(ctx, method, req)
		}
		params := &mcp.ListRootsParams{}
		if r.Params != nil {
			*params = *r.Params
		}
		var key string
		params.Meta, key = p.takeRoute(params.Meta)
		return askClient(p, ctx, key, params, (*mcp.ServerSession).ListRoots)
	}
}

// askClient sends the upstream's request params to the client of the call
// key names (route.go) with send, or hands it to the call's bridge.
func askClient[P mcp.InputRequest, R mcp.InputResponse](p *proxy, ctx context.Context, key string, params P,
	send func(*mcp.ServerSession, context.Context, P) (R, error)) (R, error) {
	var zero R
	c, err := p.callFor(key)
	if err != nil {
		return zero, err
	}
	if c.bridge != nil {
		res, err := c.bridge.ask(ctx, params)
		if err != nil {
			return zero, err
		}
		out, ok := res.(R) // asAnswer made it of the request's type
		if !ok {
			return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the client answered the request with a %T", res)}
		}
		return out, nil
	}
	cctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	return send(c.session, cctx, params)
}

func (p *proxy) elicitationComplete(ctx context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
	server := p.server.Load()
	if server == nil {
		return
	}
	for s := range server.Sessions() {
		_ = s.NotifyElicitationComplete(ctx, r.Params)
	}
}

// logMessage sends an upstream log message to every client session, each
// at the level it asked for.
func (p *proxy) logMessage(ctx context.Context, r *mcp.LoggingMessageRequest) {
	server := p.server.Load()
	if server == nil {
		return
	}
	for s := range server.Sessions() {
		_ = s.Log(ctx, r.Params)
	}
}

// progressNotification sends an upstream progress notification to the
// client whose call it is about, with the client's own token.
func (p *proxy) progressNotification(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
	v, ok := p.progress.Load(fmt.Sprint(r.Params.ProgressToken))
	if !ok {
		return
	}
	route := v.(*progressRoute)
	defer route.sent()
	params := *r.Params
	params.ProgressToken = route.token
	_ = route.session.NotifyProgress(route.call, &params) // on the call's own stream, before its result
}

// placeholder is the resource or prompt the proxy adds and removes at once
// to make the SDK send its clients a list change: the SDK sends one only
// when its own table changes. The proxy forwards resources/list and
// prompts/list, so no client ever sees it.
const placeholder = "toolmw-proxy:list-changed"

func (p *proxy) listChanged(kind string) {
	server := p.server.Load()
	if server == nil {
		return
	}
	switch kind {
	case "resource":
		server.AddResource(&mcp.Resource{URI: placeholder, Name: placeholder}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, mcp.ResourceNotFoundError(placeholder)
		})
		server.RemoveResources(placeholder)
	case "prompt":
		server.AddPrompt(&mcp.Prompt{Name: placeholder}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt"}
		})
		server.RemovePrompts(placeholder)
	}
}

// subscribe forwards the first client's subscription to a resource.
func (p *proxy) subscribe(ctx context.Context, r *mcp.SubscribeRequest) error {
	p.subsMu.Lock()
	defer p.subsMu.Unlock()
	if p.subs[r.Params.URI] == 0 {
		g, err := p.up.current(ctx)
		if err != nil {
			return p.protocolError("resources/subscribe", err)
		}
		if err := g.session.Subscribe(ctx, r.Params); err != nil {
			return p.protocolError("resources/subscribe", err)
		}
	}
	p.subs[r.Params.URI]++
	return nil
}

// unsubscribe forwards the last client's unsubscription.
func (p *proxy) unsubscribe(ctx context.Context, r *mcp.UnsubscribeRequest) error {
	p.subsMu.Lock()
	defer p.subsMu.Unlock()
	if p.subs[r.Params.URI] == 0 {
		return nil
	}
	p.subs[r.Params.URI]--
	if p.subs[r.Params.URI] > 0 {
		return nil
	}
	delete(p.subs, r.Params.URI)
	g, err := p.up.current(ctx)
	if err != nil {
		return p.protocolError("resources/unsubscribe", err)
	}
	return p.protocolError("resources/unsubscribe", g.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: r.Params.URI}))
}

// forward is the receiving middleware that serves the methods other than
// tools from the upstream: what it answers is what the client gets, except
// the text of an error (see protocolError).
func (p *proxy) forward(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" && p.visibleTo != nil {
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				return p.visible(ctx, req, list), nil
			}
			return res, err
		}
		call, ok := forwarded[method]
		if !ok {
			return next(ctx, method, req)
		}
		g, err := p.up.current(ctx)
		if err != nil {
			return nil, p.protocolError(method, err)
		}
		params := req.GetParams()
		res, err := call(ctx, g.session, params)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		for round := 1; err == nil; round++ {
			requests, state := inputOf(res)
			if !asksInput(ss, requests) {
				break
			}
			answers, ferr := fulfil(ctx, ss, requests, round) // mrtr.go
			if ferr != nil {
				return nil, p.protocolError(method, ferr)
			}
			params = withInput(params, answers, state)
			res, err = call(ctx, g.session, params)
		}
		if err != nil {
			return nil, p.protocolError(method, err)
		}
		if method == "logging/setLevel" {
			return next(ctx, method, req) // the SDK keeps each session's level
		}
		return res, nil
	}
}

// visible is list without the tools the scope guard would refuse the
// caller (the identity of the bearer token on HTTP, where
// mcpsdk.ForwardIdentity puts it, or the identity in the context; none on
// stdio).
func (p *proxy) visible(ctx context.Context, req mcp.Request, list *mcp.ListToolsResult) *mcp.ListToolsResult {
	var id *toolctx.Identity
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		id = &toolctx.Identity{Subject: extra.TokenInfo.UserID, Scopes: slices.Clone(extra.TokenInfo.Scopes)}
	} else if from := toolctx.IdentityFrom(ctx); from != nil {
		c := *from
		c.Scopes = slices.Clone(from.Scopes)
		id = &c
	}
	out := *list
	out.Tools = make([]*mcp.Tool, 0, len(list.Tools))
	for _, t := range list.Tools {
		if p.visibleTo(&toolctx.Request{Tool: t.Name, Identity: id}) {
			out.Tools = append(out.Tools, t)
		}
	}
	return &out
}

// forwarded are the methods the upstream answers, by name.
var forwarded = map[string]func(ctx context.Context, s *mcp.ClientSession, params mcp.Params) (mcp.Result, error){
	"resources/list":           forward((*mcp.ClientSession).ListResources),
	"resources/templates/list": forward((*mcp.ClientSession).ListResourceTemplates),
	"resources/read":           forward((*mcp.ClientSession).ReadResource),
	"prompts/list":             forward((*mcp.ClientSession).ListPrompts),
	"prompts/get":              forward((*mcp.ClientSession).GetPrompt),
	"logging/setLevel": func(ctx context.Context, s *mcp.ClientSession, params mcp.Params) (mcp.Result, error) {
		pr, _ := params.(*mcp.SetLoggingLevelParams)
		if init := s.InitializeResult(); init == nil || init.Capabilities == nil || init.Capabilities.Logging == nil {
			return nil, nil // the upstream does not log: the proxy's sessions keep the level
		}
		return nil, s.SetLoggingLevel(ctx, pr)
	},
}

// forward turns a client session's method for one request into an entry
// of forwarded: the params the proxy's server decoded, passed on as they
// are (nil when they are of another type, as the SDK's own methods take).
func forward[P mcp.Params, R mcp.Result](call func(*mcp.ClientSession, context.Context, P) (R, error)) func(context.Context, *mcp.ClientSession, mcp.Params) (mcp.Result, error) {
	return func(ctx context.Context, s *mcp.ClientSession, params mcp.Params) (mcp.Result, error) {
		pr, _ := params.(P)
		return call(s, ctx, pr)
	}
}

// protocolError is what a client gets when the upstream failed a method
// other than tools/call: the upstream's JSON-RPC code with the protocol's
// own words for it, never the upstream's text (which may be raw), and
// -32603 for an upstream that could not be reached. The upstream's text
// goes to the log.
func (p *proxy) protocolError(method string, err error) error {
	if err == nil {
		return nil
	}
	code := int64(jsonrpc.CodeInternalError)
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		code = wire.Code
	}
	p.logger.Warn("upstream: "+method+" failed", "err", err)
	msg := "the upstream MCP server failed"
	switch code {
	case jsonrpc.CodeInvalidParams:
		msg = "invalid params"
	case jsonrpc.CodeMethodNotFound:
		msg = "method not found"
	case jsonrpc.CodeInvalidRequest:
		msg = "invalid request"
	case -32002: // the protocol's resource not found
		msg = "resource not found"
	}
	return &jsonrpc.Error{Code: code, Message: msg}
}
