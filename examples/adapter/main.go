package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil)) // stdout is the protocol's
	s := newServer(demoChain(logger), demoTools(), adapter.WithFallbackLogger(logger))
	if err := s.serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		logger.Error("adapter: reading stdin", "error", err)
		os.Exit(1)
	}
}

// demoChain is the usual chain: diagnostics get the raw causes, the client
// gets public envelopes.
func demoChain(logger *slog.Logger) toolctx.Middleware {
	return middleware.New(
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			logger.ErrorContext(ctx, "tool failed", "tool", ev.Details.Tool(), "cause", ev.Cause())
		}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	).Middleware()
}

// tool is a tool the server lists and serves.
type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	handler     toolctx.Handler
}

type echoIn struct {
	Text string `json:"text"`
}

func demoTools() []tool {
	return []tool{
		{Name: "echo", Description: "says the text back", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
			handler: toolctx.Typed(func(_ context.Context, _ *toolctx.Request, in echoIn) (string, error) { return in.Text, nil })},
		{Name: "lookup", Description: "fails with a raw error the client never sees", InputSchema: json.RawMessage(`{"type":"object"}`),
			handler: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				return toolctx.ErrorResult(errors.New("dial tcp 10.0.0.7:5432: password authentication failed for user app"))
			})},
	}
}

// server is the stdio loop.
type server struct {
	tools []tool
	cfg   *adapter.Config
	chain toolctx.Handler // the chain around dispatch
	// call answers a tools/call: through the kit (viaKit); a test swaps in
	// an answer without it, to show what the kit prevents.
	call func(ctx context.Context, p callParams) reply

	out io.Writer // the kit's guarded stream: one whole message a Write
}

func newServer(m toolctx.Middleware, tools []tool, opts ...adapter.Option) *server {
	cfg := adapter.MustConfig("adapter-example", "newServer", append([]adapter.Option{adapter.WithTransport(toolctx.TransportStdio)}, opts...)...)
	s := &server{tools: tools, cfg: cfg}
	s.chain = toolctx.HandlerFunc(s.dispatch)
	if m != nil {
		s.chain = m(s.chain)
	}
	s.call = s.viaKit
	return s
}

// message is a JSON-RPC request or notification.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// rpcError is a JSON-RPC error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// reply is the answer to one request: a result or a protocol error.
type reply struct {
	result json.RawMessage
	err    *rpcError
}

// maxLine bounds a message, as the SDKs' stdio transports do.
const maxLine = 16 << 20

// serve reads requests from r until it ends, and writes each answer to w.
// The kit's frame guard stands between the loop and its stdio: a line the
// loop could not decode (invalid JSON, params of the wrong shape) is
// answered with a fixed message before the loop reads it, never with the
// decoder's text, as the go-sdk adapter's GuardTransport does.
func (s *server) serve(ctx context.Context, r io.Reader, w io.Writer) error {
	in, out := adapter.NewFrameGuard(s.cfg, frameCodec).Stream(r, w, maxLine)
	s.out = out
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine+1)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			s.write(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32700, "parse error"}})
			continue
		}
		if m.ID == nil {
			continue // a notification (notifications/initialized, ...)
		}
		rp := s.handle(ctx, m)
		out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		if rp.err != nil {
			out["error"] = rp.err
		} else {
			out["result"] = rp.result
		}
		s.write(out)
	}
	return sc.Err()
}

// protocolVersions are those this server speaks, newest first. (2026-07-28
// clients first try server/discover; its method-not-found error sends them
// to initialize.)
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

func (s *server) handle(ctx context.Context, m message) reply {
	switch m.Method {
	case "initialize":
		var p initializeParams
		_ = json.Unmarshal(m.Params, &p)
		v := protocolVersions[0]
		if slices.Contains(protocolVersions, p.ProtocolVersion) {
			v = p.ProtocolVersion
		}
		return result(map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "toolmw-example-adapter", "version": "0.2.0"}})
	case "ping":
		return result(map[string]any{})
	case "tools/list":
		return result(map[string]any{"tools": s.tools})
	case "tools/call":
		var p callParams
		if err := json.Unmarshal(m.Params, &p); err != nil || p.Name == "" {
			return reply{err: &rpcError{-32602, "invalid params: tools/call needs a tool name"}}
		}
		return s.call(ctx, p)
	}
	return reply{err: &rpcError{-32601, "method not found"}}
}

// initializeParams is what this server reads of an initialize.
type initializeParams struct {
	ProtocolVersion string `json:"protocolVersion"`
}

func result(v any) reply {
	b, _ := json.Marshal(v) // maps of strings and the tools' raw schemas: it encodes
	return reply{result: b}
}

// callParams is what tools/call carries.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      map[string]any  `json:"_meta,omitempty"`
}

// viaKit is the adapter proper: decode the call into the kit's Call, let
// the kit run the chain, and answer with what the codec encoded.
func (s *server) viaKit(ctx context.Context, p callParams) reply {
	c := &adapter.Call[reply]{}
	c.Request = toolctx.Request{Tool: p.Name, Arguments: toolctx.RawArguments(p.Arguments), CallID: adapter.NewCallID(), Transport: s.cfg.Transport, Meta: p.Meta}
	return c.Serve(ctx, s.cfg, s.chain, codec{s.cfg}, &sender{s: s, token: p.Meta["progressToken"]})
}

// dispatch is the handler at the end of the chain: the tool's own. An
// unknown tool goes through the chain too, so its hooks see the attempt.
func (s *server) dispatch(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	i := slices.IndexFunc(s.tools, func(t tool) bool { return t.Name == req.Tool })
	if i < 0 {
		return toolctx.ErrorResult(errs.UnknownTool(req.Tool))
	}
	return s.tools[i].handler.CallTool(ctx, req)
}

// write sends one message; a write error ends nothing here (the next read
// fails when the client has gone).
func (s *server) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return // every message is built from encoded parts: not reached
	}
	_, _ = s.out.Write(append(b, '\n'))
}

// frameCodec tells the kit's frame guard how this loop decodes a line: the
// envelope into a message (an id that is neither a string nor a number is
// refused too), the params of the methods it reads into their types, with
// encoding/json (keys matched whatever their case).
var frameCodec = adapter.FrameCodec{
	Decode: func(line []byte) (adapter.Envelope, error) {
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			return adapter.Envelope{}, err
		}
		if len(m.ID) > 0 && m.ID[0] != '"' && m.ID[0] != '-' && (m.ID[0] < '0' || m.ID[0] > '9') {
			return adapter.Envelope{}, errors.New("an id that is neither a string nor a number")
		}
		return adapter.Envelope{Method: m.Method, ID: m.ID, Params: m.Params}, nil
	},
	Params: map[string]func(adapter.Envelope) error{
		"initialize": paramsAs[initializeParams],
		"tools/call": paramsAs[callParams],
	},
	Keys: adapter.KeysFold,
}

func paramsAs[T any](e adapter.Envelope) error {
	if e.Params == nil {
		return nil
	}
	var p T
	return json.Unmarshal(e.Params, &p)
}

// codec is the kit's Codec: a toolctx.CallResult as an MCP CallToolResult.
type codec struct{ cfg *adapter.Config }

// Encode writes the normalized result's public fields only. An unknown
// tool that the chain let through is the protocol's error.
func (c codec) Encode(ctx context.Context, res *toolctx.CallResult) (reply, error) {
	res = toolctx.Normalized(ctx, res, c.cfg.Normalizer)
	if res.Error != nil && res.Error.Code == errs.CodeUnknownTool {
		return reply{err: &rpcError{-32602, res.Error.Message}}, nil
	}
	if res.NeedsInput() {
		return reply{}, errors.New("this server does not support input requests")
	}
	out := map[string]any{"content": content(res.Content), "isError": res.IsError}
	if res.StructuredContent != nil {
		out["structuredContent"] = res.StructuredContent
	}
	meta := maps.Clone(res.Meta)
	if res.Error != nil {
		em := map[string]any{"code": string(res.Error.Code)}
		if res.Error.Detail != nil {
			em["detail"] = res.Error.Detail
		}
		meta = map[string]any{toolctx.ErrorMetaKey: em} // a failure carries no other _meta
	}
	if len(meta) > 0 {
		out["_meta"] = meta
	}
	b, err := adapter.Encode(out)
	return reply{result: b}, err
}

// Failure is a content-free failure carrying only pub.
func (codec) Failure(pub errs.Public) reply {
	return result(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": pub.Message}},
		"_meta": map[string]any{toolctx.ErrorMetaKey: map[string]any{"code": string(pub.Code)}}})
}

// content writes content blocks as MCP's JSON ([]byte encodes as base64).
func content(cs []toolctx.Content) []any {
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		switch c := c.(type) {
		case *toolctx.Text:
			out = append(out, map[string]any{"type": "text", "text": c.Text})
		case *toolctx.Image:
			out = append(out, map[string]any{"type": "image", "data": c.Data, "mimeType": c.MIMEType})
		case *toolctx.Audio:
			out = append(out, map[string]any{"type": "audio", "data": c.Data, "mimeType": c.MIMEType})
		case *toolctx.ResourceLink:
			out = append(out, map[string]any{"type": "resource_link", "uri": c.URI, "name": c.Name})
		case *toolctx.EmbeddedResource:
			r := map[string]any{"uri": c.Resource.URI, "mimeType": c.Resource.MIMEType, "text": c.Resource.Text}
			if c.Resource.Blob != nil {
				r = map[string]any{"uri": c.Resource.URI, "mimeType": c.Resource.MIMEType, "blob": c.Resource.Blob}
			}
			out = append(out, map[string]any{"type": "resource", "resource": r})
		}
	}
	return out
}

// sender is the kit's Sender: progress as notifications/progress, when the
// client gave a token. This server has no logging capability, so a log
// message goes nowhere.
type sender struct {
	s     *server
	token any
}

func (n *sender) SendProgress(opts toolctx.ProgressOptions) error {
	if n.token == nil {
		return nil
	}
	p := map[string]any{"progressToken": n.token, "progress": opts.Progress}
	if opts.Total != 0 {
		p["total"] = opts.Total
	}
	if opts.Message != "" {
		p["message"] = opts.Message
	}
	n.s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": p})
	return nil
}

func (*sender) SendLog(toolctx.LogOptions) error { return nil }
