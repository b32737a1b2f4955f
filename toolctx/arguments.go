package toolctx

import (
	"encoding/json"
	"sync"
)

// Arguments are a call's arguments, as [Request.Arguments] holds them: the
// raw JSON the client sent ([RawArguments]), or the decoded value an SDK
// handed over without JSON, as mcp-go's in-process client does
// ([DecodedArguments]), which is encoded when its JSON is first read. The
// zero Arguments are none (empty JSON). An Arguments is a small value:
// copy it freely; a copy shares the encoding of the original, so a value
// is encoded once at most however many copies read it.
//
// [Arguments.JSON] is the one way to read them; [Arguments.Len] is their
// size, which does not need the JSON.
type Arguments struct {
	raw     json.RawMessage
	decoded *decodedArguments // set by DecodedArguments; raw is nil then
}

// decodedArguments is a decoded value and its JSON, made once.
type decodedArguments struct {
	value any
	once  sync.Once
	json  json.RawMessage
}

// RawArguments returns the arguments whose JSON is raw (kept, not copied;
// empty for none).
func RawArguments(raw json.RawMessage) Arguments { return Arguments{raw: raw} }

// DecodedArguments returns the arguments whose JSON is v encoded with
// encoding/json, when it is first read: v is what decoding the client's
// JSON gives (a map[string]any, say) or any value that encodes to it. A
// value that does not encode reads as no arguments. v must not change
// while the call runs: an SDK's handler that changes the map it was given
// changes what the chain's hooks read after it, and a nil v is no
// arguments.
func DecodedArguments(v any) Arguments {
	if v == nil {
		return Arguments{}
	}
	return Arguments{decoded: &decodedArguments{value: v}}
}

// JSON returns the arguments' JSON, or nil for none. For decoded arguments
// the first call encodes them, once for every copy; the caller must not
// change what it returns.
func (a Arguments) JSON() json.RawMessage {
	if a.decoded == nil {
		return a.raw
	}
	d := a.decoded
	d.once.Do(func() {
		if b, err := json.Marshal(d.value); err == nil {
			d.json = b
		}
	})
	return d.json
}

// Len returns len(a.JSON()), without encoding decoded arguments when their
// value is made of what decoding JSON into an any gives (maps, slices,
// strings, numbers, booleans, nulls) or ints: their length is counted as
// encoding/json would write them. Any other value is encoded (once, as
// JSON does).
func (a Arguments) Len() int {
	if a.decoded == nil {
		return len(a.raw)
	}
	if n, ok := jsonLen(a.decoded.value, 0); ok {
		return n
	}
	return len(a.JSON())
}
