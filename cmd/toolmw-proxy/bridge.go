package main

//lint:file-ignore SA1019 sampling and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but still requests an upstream below it may send.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// The bridge: an upstream below protocol 2026-07-28 asks its client for
// something mid-call by sending it a request (sampling/createMessage,
// elicitation/create, roots/list), which go-sdk's server refuses to send a
// client on 2026-07-28 (SEP-2322: a server there may send its client no
// request; mcp/server.go, assertServerInitiatedRequestAllowed). For such a
// client the proxy answers the client's tools/call input-required
// instead: the upstream's request is the InputRequest (under a fresh id of
// the proxy's), and the RequestState is a random key naming the call,
// which stays open upstream, parked, its request waiting. The client's
// next tools/call with that state and its InputResponses resumes it: each
// answer goes to the upstream request waiting for it, and the round waits
// for the upstream's call again, whose result (or next request, another
// input-required answer) is that round's answer. Each round is a
// tools/call of the client's, through the chain, with its row.
//
// Bounds: a parked call waits bridge.resume_timeout for its client and is
// then cancelled upstream (its request gets an error, the log says so,
// and so does a row of its own: endParked); at most bridge.max_parked
// calls are parked at once; one call has at most maxInputRounds rounds; a state that names no parked call (unknown,
// expired, resumed already, another caller's or another tool's) is the
// public invalid-arguments failure errUnknownState, which says nothing
// more. A parked call lives in this process only: behind a load balancer,
// a client's rounds must reach the same proxy.

// bridgeStatePrefix starts every RequestState the bridge makes, which is
// how the proxy tells its own state from an upstream's (passed on as it is).
const bridgeStatePrefix = "toolmw-proxy-bridge."

// maxAsksAtOnce bounds the requests of one call waiting for its client at
// once (an upstream may send several concurrently); beyond, a request is
// refused.
const maxAsksAtOnce = 16

// errUnknownState is what a client is told of a state that names no
// parked call, whatever the reason.
var errUnknownState = errs.InvalidArguments("unknown or expired request state: call the tool again without it")

// errTooManyParked is what a client is told when its call would be parked
// beyond bridge.max_parked.
var errTooManyParked = errs.Unavailable("the proxy has too many calls waiting for their clients' answers: try again later")

// errStopping is what a client is told when its call would be parked as
// the proxy stops.
var errStopping = errs.Unavailable("the proxy is stopping: call again later")

// bridgedCall is one tools/call of a client on 2026-07-28, forwarded to the
// upstream, which may ask the client for input across several rounds.
type bridgedCall struct {
	g     *generation // the upstream's process or connection the call went to
	tool  string
	owner owner
	// upToken is the progress token the upstream's call carries ("" for
	// none): each round routes it to its own client token.
	upToken string

	cancel context.CancelFunc // cancels the upstream's call
	done   chan struct{}      // closed when the upstream's call has returned
	res    *mcp.CallToolResult
	err    error

	ended   chan struct{} // closed by end
	endOnce sync.Once
	wake    chan struct{} // a request was queued (cap 1)

	mu      sync.Mutex
	endErr  error
	queue   []*upstreamAsk          // the upstream's requests not yet sent to the client
	pending map[string]*upstreamAsk // sent, by their input id, not yet answered
	seq     int
	rounds  int // the input-required answers given
}

// owner is who may resume a parked call: the client session (its id; ""
// over stdio, which has one, and on stateless HTTP, which has none) and
// the bearer token's subject, when there is one.
type owner struct{ session, subject string }

func ownerOf(req *mcp.CallToolRequest) owner {
	var o owner
	if req.Session != nil {
		o.session = req.Session.ID()
	}
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		o.subject = req.Extra.TokenInfo.UserID
	}
	return o
}

// upstreamAsk is one request of the upstream's, waiting for the client's answer.
type upstreamAsk struct {
	id     string
	req    mcp.InputRequest
	answer chan answer // cap 1
}

type answer struct {
	res mcp.InputResponse
	err error
}

// parked is a call waiting for its client to call again.
type parked struct {
	call  *bridgedCall
	since time.Time // when it was parked
	timer *time.Timer
}

// bridges reports whether a call of ss to the upstream g is bridged: ss
// is a client the proxy answers input-required for an upstream's request,
// one on 2026-07-28 or later (or one that has not said, taken for the
// latest, as go-sdk takes it), and g speaks a protocol below 2026-07-28,
// where a server may send its client requests. (An upstream on 2026-07-28
// sends none: its calls need no bridge, nor its goroutine.)
func bridges(ss *mcp.ServerSession, g *generation) bool {
	if ss == nil {
		return false
	}
	if init := g.session.InitializeResult(); init != nil && init.ProtocolVersion >= "2026-07-28" {
		return false
	}
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= "2026-07-28"
}

// startBridged starts the upstream's call for the first round of a
// bridged call, and runs that round.
func (p *proxy) startBridged(ctx context.Context, req *mcp.CallToolRequest, g *generation, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	b := &bridgedCall{g: g, tool: req.Params.Name, owner: ownerOf(req), done: make(chan struct{}), ended: make(chan struct{}),
		wake: make(chan struct{}, 1), pending: map[string]*upstreamAsk{}}
	if tok := req.Params.GetProgressToken(); tok != nil {
		b.upToken = "toolmw-proxy-" + strconv.FormatInt(p.progressSeq.Add(1), 10)
		params.SetProgressToken(b.upToken)
	}
	c := &inFlight{session: req.Session, ctx: ctx, key: p.newRouteKey(), bridge: b}
	// The upstream's call outlives the round: it runs in a context of its
	// own, ended by end (the round's cancellation, a parked call's
	// timeout) or once it returns.
	upctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), routeKey{}, c.key))
	b.cancel = cancel
	p.enter(c)
	go func() {
		defer p.leave(c)
		defer cancel()
		b.res, b.err = g.session.CallTool(upctx, params)
		close(b.done)
	}()
	return p.bridgeRound(ctx, req, b)
}

// resumeBridged is a client's next round of a parked call: its answers
// go to the upstream's requests, and the round goes on waiting.
func (p *proxy) resumeBridged(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b := p.unpark(req.Params.RequestState, ownerOf(req), req.Params.Name)
	if b == nil {
		return nil, errUnknownState
	}
	b.deliver(req.Params.InputResponses)
	return p.bridgeRound(ctx, req, b)
}

// bridgeRound is one round of b, the client's tools/call req: it ends
// with the upstream's answer, or with an input-required answer for the
// requests the upstream sent, the call parked.
func (p *proxy) bridgeRound(ctx context.Context, req *mcp.CallToolRequest, b *bridgedCall) (*mcp.CallToolResult, error) {
	if tok := req.Params.GetProgressToken(); tok != nil && b.upToken != "" {
		route := newProgressRoute(ctx, req.Session, tok)
		p.progress.Store(b.upToken, route)
		defer func() {
			route.drain(progressGrace)
			p.progress.Delete(b.upToken)
		}()
	}
	// The client's call ending (its cancellation, its deadline) ends the
	// upstream's, until the round parks it. (The round's own wait on ctx
	// ends it too: a round that returns on ctx.Done and stops the
	// AfterFunc may do so before ctx's cancellation has reached it.)
	clientEnded := func() { b.end(fmt.Errorf("the client's call ended: %w", context.Cause(ctx))) }
	stop := context.AfterFunc(ctx, clientEnded)
	defer stop()
	for {
		select {
		case <-b.done:
			b.end(nil)
			return p.callResult(ctx, b.g, b.res, b.err)
		default:
		}
		b.mu.Lock()
		for _, a := range b.queue {
			b.seq++
			a.id = "toolmw-proxy-" + strconv.Itoa(b.seq)
			b.pending[a.id] = a
		}
		b.queue = nil
		requests := make(mcp.InputRequestMap, len(b.pending))
		for id, a := range b.pending {
			requests[id] = a.req
		}
		b.mu.Unlock()
		if len(requests) > 0 {
			b.rounds++
			if b.rounds > maxInputRounds {
				err := fmt.Errorf("the upstream asked its client for input more than %d times in one call", maxInputRounds)
				b.end(err)
				return nil, err
			}
			if !stop() || ctx.Err() != nil {
				clientEnded() // the client's call ended as it was to be parked
				return nil, ctx.Err()
			}
			state, err := p.park(b)
			if err != nil {
				b.end(err)
				return nil, err
			}
			return &mcp.CallToolResult{InputRequests: requests, RequestState: state}, nil
		}
		select {
		case <-b.done:
		case <-b.wake:
		case <-b.ended:
			return nil, b.why()
		case <-ctx.Done():
			clientEnded()
			return nil, ctx.Err()
		}
	}
}

// ask hands the upstream's request r to the client of b's call, and waits
// for the answer: the client's, in its next round; or an error when the
// call ends first (the client did not call again in time, it cancelled,
// the proxy is stopping) or the upstream gives up on the request (ctx).
func (b *bridgedCall) ask(ctx context.Context, r mcp.InputRequest) (mcp.InputResponse, error) {
	a := &upstreamAsk{req: r, answer: make(chan answer, 1)}
	b.mu.Lock()
	if b.endErr != nil || isClosed(b.ended) {
		b.mu.Unlock()
		return nil, b.why()
	}
	if len(b.queue)+len(b.pending) >= maxAsksAtOnce {
		b.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("the call has %d requests to its client waiting already", maxAsksAtOnce)}
	}
	b.queue = append(b.queue, a)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	defer b.forget(a)
	select {
	case ans := <-a.answer:
		return ans.res, ans.err
	case <-b.ended:
		return nil, b.why()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forget removes a from b's requests, answered or not.
func (b *bridgedCall) forget(a *upstreamAsk) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.id != "" {
		delete(b.pending, a.id)
	}
	for i, q := range b.queue {
		if q == a {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			break
		}
	}
}

// deliver gives the client's answers to the requests waiting for them; an
// answer to no request waiting (one the upstream gave up on) is dropped,
// and a request left unanswered is asked again in the next input-required
// answer.
func (b *bridgedCall) deliver(answers mcp.InputResponseMap) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, res := range answers {
		a := b.pending[id]
		if a == nil {
			continue
		}
		delete(b.pending, id)
		a.answer <- asAnswer(a.req, res)
	}
}

// asAnswer is the client's answer res to r as the upstream's request
// takes it: a sampling answer of the 2026-07-28 shape (content as a list)
// with its one content block.
func asAnswer(r mcp.InputRequest, res mcp.InputResponse) answer {
	wrong := answer{err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("the client answered the request with a %T", res)}}
	switch r.(type) {
	case *mcp.ElicitParams:
		if e, ok := res.(*mcp.ElicitResult); ok && e != nil {
			return answer{res: e}
		}
	case *mcp.ListRootsParams:
		if l, ok := res.(*mcp.ListRootsResult); ok && l != nil {
			return answer{res: l}
		}
	case *mcp.CreateMessageParams:
		switch m := res.(type) {
		case *mcp.CreateMessageResult:
			if m != nil {
				return answer{res: m}
			}
		case *mcp.CreateMessageWithToolsResult:
			if m == nil {
				break
			}
			if len(m.Content) != 1 {
				return answer{err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("the client's sampling answer has %d content blocks; a request without tools takes one", len(m.Content))}}
			}
			return answer{res: &mcp.CreateMessageResult{Meta: m.Meta, Content: m.Content[0], Model: m.Model, Role: m.Role, StopReason: m.StopReason}}
		}
	}
	return wrong
}

// end ends b, once: the upstream's call is cancelled, and its requests
// waiting get why (nil: the call returned).
func (b *bridgedCall) end(why error) {
	b.endOnce.Do(func() {
		if why == nil {
			why = errors.New("the call has ended")
		}
		b.mu.Lock()
		b.endErr = why
		b.mu.Unlock()
		close(b.ended)
		b.cancel()
	})
}

// why is the error the upstream's requests get once b has ended.
func (b *bridgedCall) why() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	msg := "the call has ended"
	if b.endErr != nil {
		msg = b.endErr.Error()
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the proxy's client did not answer: " + msg}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// park puts b in the table of parked calls under a new random state, for
// bridge.resume_timeout at most; when it cannot, it returns the public
// error the client gets (which the upstream's request gets too).
func (p *proxy) park(b *bridgedCall) (string, error) {
	var key [32]byte
	_, _ = rand.Read(key[:]) // crypto/rand.Read does not fail (Go 1.24)
	state := bridgeStatePrefix + base64.RawURLEncoding.EncodeToString(key[:])
	p.parkedMu.Lock()
	defer p.parkedMu.Unlock()
	if p.parkedClosed {
		return "", errStopping
	}
	if len(p.parked) >= p.maxParked {
		p.logger.Warn("bridge: a call is refused: too many calls are parked, waiting for their clients", "tool", b.tool, "max_parked", p.maxParked)
		return "", errTooManyParked
	}
	pc := &parked{call: b, since: time.Now()}
	pc.timer = time.AfterFunc(p.resumeTimeout, func() {
		p.parkedMu.Lock()
		mine := p.parked[state] == pc
		if mine {
			delete(p.parked, state)
		}
		p.parkedMu.Unlock()
		if !mine {
			return
		}
		why := fmt.Errorf("the client did not call again within %v", p.resumeTimeout)
		p.endParked(pc, why, audit.OutcomeTimeout, errs.CodeTimeout)
	})
	p.parked[state] = pc
	return state, nil
}

// endParked ends a parked call whose client will not call again (its
// time is up, or the proxy is stopping), logs it and writes its row: the
// client's rounds have rows of their own, the last one input_required, and
// this one says what became of the call upstream, which no round saw. The
// row's message is why, and whether the upstream's call was cancelled or
// had answered already (its answer dropped); it names the tool, session
// and subject, and its time and duration are the wait.
func (p *proxy) endParked(pc *parked, why error, outcome audit.RowOutcome, code errs.Code) {
	b := pc.call
	what := "the call is cancelled upstream"
	if isClosed(b.done) {
		what = "the upstream's answer is dropped"
	}
	p.logger.Warn("bridge: a parked call ended before its client called again: "+what, "tool", b.tool, "reason", why.Error())
	b.end(why)
	if p.rows == nil {
		return
	}
	p.rows.Emit(context.Background(), audit.Record{
		Time: pc.since, Kind: audit.KindTool, CallID: adapter.NewCallID(), SessionID: b.owner.session,
		Tool: b.tool, Subject: b.owner.subject, Outcome: outcome, Code: code,
		Message: "parked for the client's input: " + why.Error() + "; " + what, Duration: time.Since(pc.since),
	})
}

// unpark takes the call state names out of the table, if o may resume it
// for tool; nil otherwise (the table is left as it was).
func (p *proxy) unpark(state string, o owner, tool string) *bridgedCall {
	p.parkedMu.Lock()
	defer p.parkedMu.Unlock()
	pc := p.parked[state]
	if pc == nil || pc.call.owner != o || pc.call.tool != tool {
		return nil
	}
	if !pc.timer.Stop() {
		return nil // its time is up: the timer's function is ending it
	}
	delete(p.parked, state)
	return pc.call
}

// closeBridge ends every parked call, and parks no more: the proxy is
// stopping.
func (p *proxy) closeBridge() {
	p.parkedMu.Lock()
	p.parkedClosed = true
	calls := make([]*parked, 0, len(p.parked))
	for state, pc := range p.parked {
		// A timer that fired already finds its call gone from the table,
		// and leaves it to this.
		pc.timer.Stop()
		calls = append(calls, pc)
		delete(p.parked, state)
	}
	p.parkedMu.Unlock()
	for _, pc := range calls {
		p.endParked(pc, errors.New("the proxy is stopping"), audit.OutcomeError, errs.CodeUnavailable)
	}
}
