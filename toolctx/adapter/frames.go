package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
)

// Both SDKs decode a JSON-RPC request's params into their own Go types
// before any hook or middleware of theirs runs, and send the decoder's text
// to the client when that fails: mcp-go (v1.2.1) as -32600 "unparsable
// tools/call request: json: cannot unmarshal ... into Go struct field
// CallToolRequest.params.task of type mcp.TaskParams", go-sdk (v1.8.0) as
// -32602 "handling 'tools/call': invalid params: unmarshaling ... into a
// *mcp.CallToolParamsRaw: json: cannot unmarshal ...". A FrameGuard reads a
// frame before the SDK does, decides as the SDK's decoder would, and answers
// a frame the SDK could not decode with a fixed message; the decoder's text
// goes to the adapter's fallback logger. Each adapter wires it where its SDK
// lets it (mcp-go: its OnRequestInitialization hook; go-sdk: its transports
// and its HTTP handlers' requests).

// The fixed messages of a FrameGuard's answers.
const (
	// MsgFrameParse answers a frame that is not JSON (-32700).
	MsgFrameParse = "parse error: the message is not valid JSON"
	// MsgFrameEnvelope answers a frame that is JSON but not a JSON-RPC 2.0
	// message the server can read: a "jsonrpc" other than "2.0", an "id"
	// that is neither a string nor a number, a "method" that is not a
	// string, nesting deeper than the SDK reads, an empty batch (-32600).
	MsgFrameEnvelope = "invalid request: not a JSON-RPC 2.0 message this server can read"
	// MsgFrameParams answers a request whose params do not decode as its
	// method's (a field of the wrong JSON type, a number beyond float64's
	// range), with the SDK's own code for it ([FrameCodec.ParamsCode]).
	MsgFrameParams = "invalid request: its params do not match the method's"
)

// The JSON-RPC codes of a FrameGuard's answers.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeInvalidParams  = -32602
)

// Envelope is what a [FrameCodec] reads of one JSON-RPC message.
type Envelope struct {
	// Message is the whole message as received; nil when the caller has
	// only its parts ([FrameGuard.CheckParams]).
	Message []byte
	// Method is the request's or notification's method; empty for a
	// response.
	Method string
	// ID is the request's id as JSON (a number or a string); nil for a
	// notification or a response.
	ID []byte
	// Params are the params as received; nil when absent.
	Params []byte
}

// KeyMatch is how an SDK's decoder matches a JSON key to a field.
type KeyMatch int

const (
	// KeysExact: a key names a field only spelled exactly as the field's
	// tag (go-sdk's decoder).
	KeysExact KeyMatch = iota
	// KeysFold: a key names a field whatever its case (encoding/json, which
	// mcp-go uses), Unicode folding included.
	KeysFold
)

// FrameCodec is what a [FrameGuard] needs of an SDK: how it decodes a
// message, and each method's params.
type FrameCodec struct {
	// Decode reads one message (a JSON object) as the SDK does, and fails
	// exactly when the SDK's own decoding of the message would. Required.
	Decode func(message []byte) (Envelope, error)
	// Params holds, per method, a check that fails exactly when the SDK's
	// decoding of a request of that method fails (the check may read the
	// envelope's Message or its Params, as the SDK does). A method absent
	// here is passed to the SDK as it is. Required.
	Params map[string]func(Envelope) error
	// ParamsCode is the JSON-RPC code the SDK gives a request whose params
	// do not decode (go-sdk -32602, mcp-go -32600); 0 means -32602.
	ParamsCode int
	// Keys is how the SDK's decoder matches keys; the fast path reads
	// tools/call requests by it.
	Keys KeyMatch
}

// FrameGuard checks JSON-RPC frames before an SDK decodes them. It is safe
// for concurrent use. Make one with [NewFrameGuard].
type FrameGuard struct {
	cfg   *Config
	codec FrameCodec
}

// NewFrameGuard returns the guard of codec's SDK, logging through cfg (its
// Name and its fallback Logger; nil cfg is the defaults). It panics when
// codec has no Decode or no Params: a construction mistake.
func NewFrameGuard(cfg *Config, codec FrameCodec) *FrameGuard {
	if codec.Decode == nil || codec.Params == nil {
		panic("adapter.NewFrameGuard: the codec needs Decode and Params")
	}
	if cfg == nil {
		cfg = &Config{}
	}
	if codec.ParamsCode == 0 {
		codec.ParamsCode = CodeInvalidParams
	}
	return &FrameGuard{cfg: cfg, codec: codec}
}

// Refusal is a FrameGuard's answer to a message the SDK could not decode:
// a JSON-RPC error with a fixed message. It is an error whose text is the
// message, so an SDK hook can return it as it is.
type Refusal struct {
	// Code is the JSON-RPC error code.
	Code int
	// Message is one of the fixed messages (MsgFrame...).
	Message string
	// ID is the id to answer, as JSON; nil answers with a null id.
	ID []byte
	// Notification is set when the message had a method and no id: a
	// notification, which is never answered (the guard drops it).
	Notification bool
}

func (r *Refusal) Error() string { return r.Message }

// Answer is the refusal as a JSON-RPC error response, with no trailing
// newline.
func (r *Refusal) Answer() []byte {
	b := make([]byte, 0, 64+len(r.Message)+len(r.ID))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if r.ID == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, r.ID...)
	}
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(r.Code), 10)
	b = append(b, `,"message":`...)
	b = strconv.AppendQuote(b, r.Message) // the fixed messages are ASCII
	return append(b, "}}"...)
}

// CheckMessage checks one message as received. It returns nil when the SDK
// can decode it (the common tools/call is read once, without allocating);
// otherwise the refusal to answer it with, after logging the decoder's text
// to the fallback logger.
func (g *FrameGuard) CheckMessage(ctx context.Context, message []byte) *Refusal {
	if json.Valid(message) && g.quick(message) {
		return nil
	}
	return g.checkMessage(ctx, message)
}

// CheckDecoded is [FrameGuard.CheckMessage] for a message the SDK has
// already decoded as JSON, whole, before the guard sees it (mcp-go
// decodes every message's envelope before its OnRequestInitialization
// hook): the common tools/call is read once, and its validity is not
// checked again, which on mcp-go in process was half of the guard's time.
// The message must be valid JSON: the fast path may pass one that is not.
func (g *FrameGuard) CheckDecoded(ctx context.Context, message []byte) *Refusal {
	if g.quick(message) {
		return nil
	}
	return g.checkMessage(ctx, message)
}

func (g *FrameGuard) checkMessage(ctx context.Context, message []byte) *Refusal {
	if !json.Valid(message) {
		g.log(ctx, "", "not valid JSON", nil)
		return &Refusal{Code: CodeParseError, Message: MsgFrameParse}
	}
	e, err := g.codec.Decode(message)
	if err != nil {
		g.log(ctx, "", "its envelope does not decode", err)
		return &Refusal{Code: CodeInvalidRequest, Message: MsgFrameEnvelope}
	}
	e.Message = message
	return g.checkParams(ctx, e)
}

// CheckParams checks the params of a request (or, with notification set,
// a notification) of method whose envelope the SDK has decoded already:
// nil when the SDK can decode them (those of the common tools/call are read
// once, without allocating), otherwise the refusal to answer it with (its
// ID is for the caller to set), after logging the decoder's text.
func (g *FrameGuard) CheckParams(ctx context.Context, method string, params []byte, notification bool) *Refusal {
	if method == "tools/call" && g.quickParams(params) {
		return nil
	}
	r := g.checkParams(ctx, Envelope{Method: method, Params: params})
	if r != nil {
		r.Notification = notification
	}
	return r
}

func (g *FrameGuard) checkParams(ctx context.Context, e Envelope) *Refusal {
	check := g.codec.Params[e.Method]
	if check == nil || e.Method == "" {
		return nil
	}
	err := check(e)
	if err == nil {
		return nil
	}
	g.log(ctx, e.Method, "its params do not decode", err)
	return &Refusal{Code: g.codec.ParamsCode, Message: MsgFrameParams, ID: e.ID, Notification: e.ID == nil}
}

// CheckFrame checks a frame as a transport receives it: one message, or a
// batch (a JSON array of messages), with any white space around. pass
// reports whether to hand the frame to the SDK unchanged; when it is false,
// answer is what to send back in its place, nil when nothing is to be sent
// (a notification). A batch is passed only when every message in it is; one
// that is not is answered whole, with one refusal (the id of a message of a
// batch cannot be answered alone).
func (g *FrameGuard) CheckFrame(ctx context.Context, frame []byte) (answer []byte, pass bool) {
	t := bytes.TrimLeft(frame, " \t\r\n")
	if len(t) > 0 && t[0] == '[' {
		return g.checkBatch(ctx, frame)
	}
	r := g.CheckMessage(ctx, frame)
	switch {
	case r == nil:
		return nil, true
	case r.Notification:
		return nil, false
	}
	return r.Answer(), false
}

func (g *FrameGuard) checkBatch(ctx context.Context, frame []byte) ([]byte, bool) {
	var msgs []json.RawMessage
	if err := json.Unmarshal(frame, &msgs); err != nil {
		g.log(ctx, "", "a batch that is not valid JSON", err)
		return (&Refusal{Code: CodeParseError, Message: MsgFrameParse}).Answer(), false
	}
	if len(msgs) == 0 {
		g.log(ctx, "", "an empty batch", nil)
		return (&Refusal{Code: CodeInvalidRequest, Message: MsgFrameEnvelope}).Answer(), false
	}
	for _, m := range msgs {
		if r := g.CheckMessage(ctx, m); r != nil {
			return (&Refusal{Code: r.Code, Message: r.Message}).Answer(), false
		}
	}
	return nil, true
}

func (g *FrameGuard) log(ctx context.Context, method, what string, err error) {
	l := g.cfg.logger()
	attrs := []any{}
	if method != "" {
		attrs = append(attrs, "method", method)
	}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	Run(func() { // a logger that panics changes nothing
		l.WarnContext(ctx, g.cfg.Name+": a JSON-RPC message the SDK cannot decode ("+what+"); answered with a fixed error", attrs...)
	})
}

// AppendJSONID appends the JSON form of a request id an SDK has decoded
// (a string, or an integer or float64 number); any other value appends
// nothing and reports false.
func AppendJSONID(b []byte, id any) ([]byte, bool) {
	switch v := id.(type) {
	case string:
		q, _ := json.Marshal(v) // a string always encodes (invalid UTF-8 as U+FFFD)
		return append(b, q...), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64), true
	}
	return b, false
}
