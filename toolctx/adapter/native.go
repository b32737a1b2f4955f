package adapter

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Native runs next, a call of the SDK's own handler for the call (a native
// tool, with any SDK middleware inside the adapter), and returns its
// result; a panic in it is the failure toolctx.ErrorResult of an
// [*errs.PanicError], so that the chain's interceptors see a failure, not
// a panic, with or without middleware.Recover in the chain. (A Goexit goes
// on to [Call.Serve]'s containment.)
func Native(next func() *toolctx.CallResult) (res *toolctx.CallResult) {
	defer func() {
		if v := recover(); v != nil {
			res = toolctx.ErrorResult(errs.NewPanicError(v))
		}
	}()
	return next()
}

// Register calls register, an SDK's registration of the tool named tool,
// and returns its panic (SDKs panic on what they refuse: a name taken, an
// annotation they check) as a [*errs.ToolSchemaError] naming sdk.
func Register(sdk, tool string, register func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &errs.ToolSchemaError{Tool: tool, Schema: errs.SchemaInput, Err: fmt.Errorf("%s refused the tool: %v", sdk, v)}
		}
	}()
	register()
	return nil
}

// Encode encodes v as JSON without HTML escaping (as the SDKs' encoders
// write), checking that it nests no deeper than [MaxDepth]. A panic in a
// MarshalJSON method is returned as an error holding an [*errs.PanicError].
func Encode(v any) (b json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, errs.NewPanicError(p)
		}
	}()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	if err := CheckDepth(b); err != nil {
		return nil, err
	}
	return b, nil
}

// MaxDepth is how deep a value in a result may nest. Clients' decoders
// refuse a message that nests deeper than 1000 objects and arrays (go-sdk's
// internal/json, defaultMaxDepth), and then close the session; a value
// sits at most 6 levels down in the message (the message, the result, the
// content list, a block, its resource, its _meta).
const MaxDepth = 1000 - 6

// CheckDepth fails if the JSON b nests deeper than [MaxDepth].
func CheckDepth(b []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("the value nests deeper than %d levels, more than MCP clients decode", MaxDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// RawValues returns each value of m as the JSON it encodes to, or nil for
// a nil m: the client's answers of a multi-round-trip request's later
// round ([toolctx.Request.InputResponses]) from the SDK's decoded form. A
// value that does not encode is left out (the SDK decoded it from JSON: it
// encodes).
func RawValues[M ~map[string]V, V any](m M) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		if b, err := json.Marshal(v); err == nil {
			out[k] = b
		}
	}
	return out
}
