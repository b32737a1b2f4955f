package adapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"

	"github.com/toolmw/toolmw/errs"
)

// EncodeValue is [Encode] for a value of a result (structured content, a
// _meta value): a json.RawMessage is only checked, and returned as it is.
func EncodeValue(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if raw != nil && !json.Valid(raw) {
			return nil, errors.New("the json.RawMessage is not valid JSON")
		}
		return raw, CheckDepth(raw)
	}
	return Encode(v)
}

// EncodeMeta returns a copy of a _meta map with each value encoded
// ([EncodeValue]), or nil for an empty m; the error names the key.
func EncodeMeta(m map[string]any) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		raw, err := EncodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
		out[k] = raw
	}
	return out, nil
}

// plainDepth bounds Plain's walk; deeper values (and cycles) are not plain.
const plainDepth = 32

// Plain reports whether v certainly encodes, without encoding it and
// without allocating: v is made of strings, bools, integers, finite
// floats, valid json.RawMessage, and maps and slices of them. A value that
// is not plain may still encode: encode it to find out.
func Plain(v any) bool { return plain(v, 0) }

func plain(v any, depth int) bool {
	switch v := v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, []string, map[string]string:
		return true
	case float64:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case float32:
		return plain(float64(v), depth)
	case json.RawMessage:
		return json.Valid(v)
	case map[string]any:
		if depth >= plainDepth {
			return false
		}
		for _, e := range v {
			if !plain(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		if depth >= plainDepth {
			return false
		}
		for _, e := range v {
			if !plain(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// ErrorMeta is the value of a failure's _meta[[toolctx.ErrorMetaKey]]:
// {"code": pub.Code} and, when pub has one, "detail".
func ErrorMeta(pub errs.Public) map[string]any {
	m := map[string]any{"code": string(pub.Code)}
	if pub.Detail != nil {
		m["detail"] = pub.Detail
	}
	return m
}

// Transcode sets dst, a pointer, from the JSON encoding of src: how an
// adapter converts a value between toolctx's type and its SDK's where both
// are the protocol's JSON (multi-round-trip input requests, say).
func Transcode(dst, src any) error {
	b, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// URLElicitations returns the data of a handler's URL-elicitation-required
// protocol error (code -32042) rebuilt from the protocol's fields only
// (mode "url", message, url, elicitationId), or false when data holds no
// well-formed URL elicitation: such an error passes to the client (the
// user must complete its elicitations), anything else in it is dropped.
// See docs/adapters/mcpsdk.md.
func URLElicitations(data []byte) (json.RawMessage, bool) {
	var d struct {
		Elicitations []struct {
			Mode          string `json:"mode"`
			Message       string `json:"message"`
			URL           string `json:"url"`
			ElicitationID string `json:"elicitationId,omitempty"`
		} `json:"elicitations"`
	}
	if json.Unmarshal(data, &d) != nil || len(d.Elicitations) == 0 {
		return nil, false
	}
	for _, e := range d.Elicitations {
		if u, err := url.Parse(e.URL); e.Mode != "url" || err != nil || !u.IsAbs() {
			return nil, false
		}
	}
	b, err := json.Marshal(d)
	return b, err == nil
}
