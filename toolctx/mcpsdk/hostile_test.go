package mcpsdk_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// Hostile shapes beyond the common ones (server_test.go): what a handler
// returns that looks like the SDK's own refusals, results that cannot be
// encoded, a runtime.Goexit, a nil result, and generated shapes ("gen:N",
// "genok:N") composed at random from a seed that both sides derive the
// same expectations from.

var (
	// wireShapes are a handler's own JSON-RPC wire errors, shaped like
	// the SDK's refusals.
	wireShapes = []string{"wire_unknown", "wire_invalid_params", "wire_elicit_form", "wire_elicit_junk", "wire_data", "validation_text", "validation_fmt"}
	// encShapes are successes that cannot be encoded.
	encShapes = []string{"enc_chan", "enc_func", "enc_nan", "enc_cycle", "enc_marshal_err", "enc_marshal_panic", "enc_raw", "enc_meta", "enc_content_meta", "enc_priority", "enc_resource_meta", "enc_deep", "enc_deep_meta", "enc_err_panics", "enc_goexit"}
)

// secretMarshaler fails to encode, quoting its secret.
type secretMarshaler struct{ secret string }

func (m secretMarshaler) MarshalJSON() ([]byte, error) {
	return nil, errors.New("cannot encode " + m.secret)
}

// panickyError is an error whose Error panics.
type panickyError struct{ secret string }

func (e panickyError) Error() string { panic("Error() of " + e.secret) }

// errPanicMarshaler fails to encode with an error whose Error panics.
type errPanicMarshaler struct{ secret string }

func (m errPanicMarshaler) MarshalJSON() ([]byte, error) { return nil, panickyError(m) }

// onceMarshaler encodes the first time and panics every time after.
type onceMarshaler struct {
	n      *atomic.Int32
	secret string
}

func (m onceMarshaler) MarshalJSON() ([]byte, error) {
	if m.n.Add(1) > 1 {
		panic("encoded twice " + m.secret)
	}
	return []byte(`"once"`), nil
}

// goexitMarshaler calls runtime.Goexit when encoded (t.FailNow in a test
// type's MarshalJSON).
type goexitMarshaler struct{ secret string }

func (m goexitMarshaler) MarshalJSON() ([]byte, error) {
	runtime.Goexit()
	return nil, nil
}

// panicMarshaler panics when encoded.
type panicMarshaler struct{ secret string }

func (m panicMarshaler) MarshalJSON() ([]byte, error) { panic("encoding " + m.secret) }

// hostileWire returns a handler's own wire-shaped error for shape, or nil.
func hostileWire(shape, tool, secret string) error {
	data := json.RawMessage(strconv.Quote(secret))
	switch shape {
	case "wire_unknown":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", tool), Data: data}
	case "wire_invalid_params":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + secret, Data: data}
	case "wire_elicit_form":
		d, _ := json.Marshal(map[string]any{"elicitations": []map[string]any{{"mode": "form", "message": secret}}})
		return &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: secret, Data: d}
	case "wire_elicit_junk":
		return &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "URL elicitation required", Data: data}
	case "wire_data":
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error", Data: json.RawMessage(`{"dsn":` + strconv.Quote(secret) + `}`)}
	case "validation_text":
		return errors.New(`validating "arguments": ` + secret)
	case "validation_fmt":
		return fmt.Errorf("validating \"arguments\": %v", errors.New(secret))
	}
	return nil
}

// hostileResult is a success that cannot be encoded, in toolctx's form,
// or nil.
func hostileResult(shape, secret string) *toolctx.CallResult {
	text := []toolctx.Content{&toolctx.Text{Text: "fine"}}
	sc := func(v any) *toolctx.CallResult {
		return &toolctx.CallResult{Content: text, StructuredContent: map[string]any{"s": secret, "v": v}}
	}
	switch shape {
	case "enc_chan":
		return sc(make(chan int))
	case "enc_func":
		return sc(func() {})
	case "enc_nan":
		return sc(math.NaN())
	case "enc_cycle":
		m := map[string]any{"s": secret}
		m["self"] = m
		return &toolctx.CallResult{Content: text, StructuredContent: m}
	case "enc_marshal_err":
		return sc(secretMarshaler{secret})
	case "enc_marshal_panic":
		return sc(panicMarshaler{secret})
	case "enc_deep":
		// Deeper than the SDK's client decodes: it would close the session.
		return sc(deep(1200, secret))
	case "enc_deep_meta":
		return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "fine", Meta: map[string]any{"d": deep(1100, secret)}}}}
	case "enc_goexit":
		return sc(goexitMarshaler{secret})
	case "enc_err_panics":
		return &toolctx.CallResult{Content: text, Meta: map[string]any{"e": errPanicMarshaler{secret}}}
	case "enc_once":
		// Not hostile if encoded once: a success.
		return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "once", Meta: map[string]any{"m": onceMarshaler{new(atomic.Int32), secret}}}},
			StructuredContent: map[string]any{"m": onceMarshaler{new(atomic.Int32), secret}}, Meta: map[string]any{"m": onceMarshaler{new(atomic.Int32), secret}}}
	case "enc_raw":
		return &toolctx.CallResult{Content: text, StructuredContent: json.RawMessage(`{"s":` + strconv.Quote(secret))}
	case "enc_meta":
		return &toolctx.CallResult{Content: text, Meta: map[string]any{"s": secret, "c": make(chan int)}}
	case "enc_content_meta":
		return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "fine", Meta: map[string]any{"s": secret, "f": func() {}}}}}
	case "enc_priority":
		p := math.Inf(1)
		return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: secret, Annotations: &toolctx.Annotations{Priority: &p}}}}
	case "enc_resource_meta":
		return &toolctx.CallResult{Content: []toolctx.Content{&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///x", Text: secret, Meta: map[string]any{"n": math.NaN()}}}}}
	}
	if seed, ok := strings.CutPrefix(shape, "genok:"); ok {
		n, _ := strconv.ParseUint(seed, 10, 64)
		return genHostileResult(n, secret).result
	}
	return nil
}

// sdkEncShapes are successes that cannot be sent, which only a native
// handler can make (toolctx has no form for them).
var sdkEncShapes = []string{"enc_nil_content", "enc_input_requests"}

// sdkHostileResult is hostileResult in the SDK's form.
func sdkHostileResult(shape, secret string) *mcp.CallToolResult {
	switch shape {
	case "enc_nil_content":
		// Sent as null, which the SDK's client refuses.
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: secret}, nil}}
	case "enc_input_requests":
		return &mcp.CallToolResult{InputRequests: map[string]mcp.InputRequest{"a": &mcp.ElicitParams{Message: secret,
			RequestedSchema: map[string]any{"type": "object", "c": make(chan int)}}}}
	}
	r := hostileResult(shape, secret)
	if r == nil {
		return nil
	}
	out := &mcp.CallToolResult{StructuredContent: r.StructuredContent, Meta: r.Meta}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *toolctx.Text:
			var ann *mcp.Annotations
			if c.Annotations != nil && c.Annotations.Priority != nil {
				ann = &mcp.Annotations{Priority: *c.Annotations.Priority}
			}
			out.Content = append(out.Content, &mcp.TextContent{Text: c.Text, Meta: c.Meta, Annotations: ann})
		case *toolctx.EmbeddedResource:
			out.Content = append(out.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: c.Resource.URI, Text: c.Resource.Text, Meta: c.Resource.Meta}})
		}
	}
	return out
}

// deep is a value that nests n maps and slices deep around secret.
func deep(n int, secret string) any {
	var v any = secret
	for i := range n {
		if i%2 == 0 {
			v = map[string]any{"a": v}
		} else {
			v = []any{v}
		}
	}
	return v
}

// doGoexit ends the calling goroutine for shape "goexit", as t.FailNow does.
func doGoexit(shape string) {
	if shape == "goexit" {
		runtime.Goexit()
	}
}

// protocolCodes are the JSON-RPC codes the SDK and the protocol use.
var protocolCodes = []int64{jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams,
	jsonrpc.CodeInternalError, mcp.CodeURLElicitationRequired, -32002, -32000, -32099, 0, 1, -1}

// sdkTexts are message beginnings of the SDK's own errors.
var sdkTexts = []string{`unknown tool %q`, `validating "arguments": `, "URL elicitation required", "marshaling output: ", "validating tool output: ",
	"unmarshaling arguments: ", "method not found", "invalid params", ""}

// wrapped is an error type of the generator's with an Unwrap.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg + ": " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// opaque is an error type that hides its text behind a method.
type opaque struct{ secret string }

func (o opaque) Error() string { return "opaque " + o.secret }

// genErr composes a raw error at random from seed: a base (a plain error,
// a wire error with a protocol code and an SDK-like message, an error
// whose text starts as the SDK's, an opaque type), wrapped a few times at
// random (%w, %v, errors.Join, a wrapper type). The secret is always in
// its text. No public error is in it, so it must always be scrubbed.
func genErr(seed uint64, tool, secret string) error {
	r := rand.New(rand.NewPCG(seed, 7))
	text := func() string {
		t := sdkTexts[r.IntN(len(sdkTexts))]
		if strings.Contains(t, "%q") {
			t = fmt.Sprintf(t, tool)
		}
		return t
	}
	var err error
	switch r.IntN(5) {
	case 0:
		err = errors.New(text() + secret)
	case 1, 2:
		we := &jsonrpc.Error{Code: protocolCodes[r.IntN(len(protocolCodes))], Message: text()}
		switch r.IntN(4) {
		case 0:
			we.Message += secret
		case 1:
			we.Data = json.RawMessage(strconv.Quote(secret))
		case 2:
			d, _ := json.Marshal(map[string]any{"elicitations": []map[string]any{{"mode": "url", "message": "m", "url": secret}}})
			we.Data = d
		default:
			d, _ := json.Marshal(map[string]any{"elicitations": []map[string]any{{"mode": []string{"url"}, "url": "https://x/" + secret}}, "x": secret})
			we.Data, we.Message = d, we.Message+secret
		}
		if we.Data == nil && !strings.Contains(we.Message, secret) {
			we.Message += secret
		}
		err = we
	case 3:
		err = fmt.Errorf("%s%v", text(), opaque{secret})
	default:
		err = opaque{secret}
	}
	for range r.IntN(4) {
		switch r.IntN(4) {
		case 0:
			err = fmt.Errorf("%s%w", text(), err)
		case 1:
			err = fmt.Errorf("%s%v", text(), err)
		case 2:
			err = errors.Join(errors.New(text()), err)
		default:
			err = &wrapped{msg: text(), err: err}
		}
	}
	return err
}

// genResult is a generated success that cannot be encoded.
type genResult struct {
	result       *toolctx.CallResult
	panics       bool // encoding it panics
	secretInText bool // the encoder's error quotes the secret
}

// genHostileResult builds, from seed, a random JSON-like value with the
// secret in some of its strings and one leaf that cannot be encoded at a
// random place, and puts it at a random place of a result.
func genHostileResult(seed uint64, secret string) genResult {
	r := rand.New(rand.NewPCG(seed, 11))
	var g genResult
	leaf := func() any {
		switch r.IntN(10) {
		case 0:
			return make(chan string)
		case 1:
			return func() string { return secret }
		case 2:
			return math.NaN()
		case 3:
			return math.Inf(-1)
		case 4:
			return complex(1, 2)
		case 5:
			g.secretInText = true
			return secretMarshaler{secret}
		case 6:
			g.panics, g.secretInText = true, true
			return panicMarshaler{secret}
		case 7:
			m := map[string]any{"s": secret}
			m["loop"] = []any{m}
			return m
		case 8:
			if r.IntN(2) == 0 {
				return deep(1000+r.IntN(500), secret)
			}
			return json.RawMessage("[" + strconv.Quote(secret) + ",")
		default:
			return map[bool]string{true: secret}
		}
	}
	var build func(depth int) any
	planted := false
	build = func(depth int) any {
		if depth == 0 || r.IntN(4) == 0 {
			if !planted && r.IntN(2) == 0 {
				planted = true
				return leaf()
			}
			if r.IntN(2) == 0 {
				return secret
			}
			return r.Float64()
		}
		if r.IntN(2) == 0 {
			n := 1 + r.IntN(3)
			s := make([]any, n)
			for i := range s {
				s[i] = build(depth - 1)
			}
			return s
		}
		m := map[string]any{}
		for i := range 1 + r.IntN(3) {
			m["k"+strconv.Itoa(i)] = build(depth - 1)
		}
		return m
	}
	v := build(1 + r.IntN(5))
	if !planted {
		v = []any{v, leaf()}
	}
	meta := map[string]any{"v": v}
	switch r.IntN(4) {
	case 0:
		g.result = &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ok"}}, StructuredContent: map[string]any{"v": v}}
	case 1:
		g.result = &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ok"}}, Meta: meta}
	case 2:
		g.result = &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "ok", Meta: meta}}}
	default:
		g.result = &toolctx.CallResult{Content: []toolctx.Content{&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///g", Text: "g", Meta: meta}}}}
	}
	return g
}

// genShape draws a shape for a call: a common one, a hostile one, or a
// generated one.
func genShape(r *rand.Rand, shapes []string) string {
	switch k := r.IntN(10); {
	case k < 2:
		return "gen:" + strconv.FormatUint(r.Uint64()>>1, 10)
	default:
		return shapes[r.IntN(len(shapes))]
	}
}
