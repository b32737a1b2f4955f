package audit

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Limits are the byte limits on a row's fields that a client can make
// large. [Async] applies them ([AsyncConfig.Limits]) before a row is
// queued; [Direct], [SlogSink.Emit] and the interceptor's fallback log
// (a row an emitter could not take) apply the defaults; any other emitter
// may call [Limits.Apply]. A zero field takes
// its default; a negative one means no limit.
//
// A string longer than its limit is cut, on a UTF-8 boundary, to at most
// limit bytes that end in the marker "…[truncated N bytes]" (N the original
// length). A map (ClientMeta, Detail) whose JSON is larger than its limit
// keeps its keys in sorted order while they fit, and gets the key
// "toolmw_truncated" with the number of keys left out and the original
// size. Arguments larger than their limit become
// {"toolmw_truncated":{"bytes":N,"prefix":"<the first bytes, as a string>"}}.
// A value that is cut is a copy: the row holds no reference to the
// original.
type Limits struct {
	// Tool is the tool name's limit: a client may call an unknown tool by
	// any name. Default 256.
	Tool int
	// ID is the limit on CallID, RequestID, SessionID, Subject and
	// Transport, which may come from request headers. Default 256.
	ID int
	// Message is the message's limit (a raw error's text may quote the
	// client's input). Default 4096.
	Message int
	// ClientMeta is the limit on the JSON of the client's _meta. Default
	// 4096.
	ClientMeta int
	// Detail is the limit on the JSON of the public error detail (a
	// validation feedback may quote the input). Default 4096.
	Detail int
	// Arguments is the limit on the recorded arguments (with
	// [WithArguments]). Default 16384.
	Arguments int
	// Path is the limit on an HTTP row's path and method. Default 1024.
	Path int
}

// DefaultLimits returns the limits a zero [Limits] stands for.
func DefaultLimits() Limits {
	return Limits{Tool: 256, ID: 256, Message: 4096, ClientMeta: 4096, Detail: 4096, Arguments: 16384, Path: 1024}
}

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	for _, p := range [...]struct{ v, def *int }{
		{&l.Tool, &d.Tool}, {&l.ID, &d.ID}, {&l.Message, &d.Message}, {&l.ClientMeta, &d.ClientMeta},
		{&l.Detail, &d.Detail}, {&l.Arguments, &d.Arguments}, {&l.Path, &d.Path},
	} {
		if *p.v == 0 {
			*p.v = *p.def
		}
	}
	return l
}

// Apply cuts r's fields to the limits (zero fields of l take their
// defaults). A row within the limits is left as it is, without allocating.
func (l Limits) Apply(r *Record) {
	l = l.withDefaults()
	l.apply(r)
}

// apply is Apply with the defaults already filled in. A row within the
// limits, with no map (what a successful call's row is), is checked in one
// expression, without a call per field.
func (l *Limits) apply(r *Record) {
	if len(r.Tool) <= l.Tool && len(r.CallID) <= l.ID && len(r.RequestID) <= l.ID && len(r.SessionID) <= l.ID &&
		len(r.Subject) <= l.ID && len(r.Transport) <= l.ID && len(r.Message) <= l.Message && len(r.Method) <= l.Path &&
		len(r.Path) <= l.Path && len(r.ClientMeta) == 0 && len(r.Detail) == 0 && len(r.Arguments) <= l.Arguments {
		return // a negative limit (none) fails its test: the fields are then checked one by one
	}
	l.applyEach(r)
}

// applyEach cuts each of r's fields to its limit.
func (l *Limits) applyEach(r *Record) {
	r.Tool = cut(r.Tool, l.Tool)
	r.CallID = cut(r.CallID, l.ID)
	r.RequestID = cut(r.RequestID, l.ID)
	r.SessionID = cut(r.SessionID, l.ID)
	r.Subject = cut(r.Subject, l.ID)
	r.Transport = cut(r.Transport, l.ID)
	r.Message = cut(r.Message, l.Message)
	r.Method = cut(r.Method, l.Path)
	r.Path = cut(r.Path, l.Path)
	r.ClientMeta = cutMap(r.ClientMeta, l.ClientMeta)
	r.Detail = cutMap(r.Detail, l.Detail)
	if l.Arguments >= 0 && len(r.Arguments) > l.Arguments {
		r.Arguments = cutArguments(r.Arguments, l.Arguments)
	}
}

// truncMarker is what ends a cut string.
func truncMarker(n int) string { return "…[truncated " + strconv.Itoa(n) + " bytes]" }

// cut returns s when it fits in limit bytes, else a copy of its first bytes
// (on a rune boundary) ending in the marker, at most limit bytes long.
func cut(s string, limit int) string {
	if limit < 0 || len(s) <= limit {
		return s
	}
	m := truncMarker(len(s))
	keep := max(limit-len(m), 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	if limit < len(m) {
		return "" // not even the marker fits
	}
	return s[:keep] + m // a new string: no reference to s
}

// cutMap returns m when its JSON is about limit bytes or less, else a copy
// with the keys that fit, in sorted order, and the "toolmw_truncated" key.
func cutMap(m map[string]any, limit int) map[string]any {
	if limit < 0 || len(m) == 0 || jsonSize(m, limit+1) <= limit {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	total := 0
	for _, k := range keys {
		total += jsonSize(k, -1) + 1 + jsonSize(m[k], -1) + 1
	}
	const reserve = 80 // the marker's key and value
	out := make(map[string]any, len(keys))
	used, dropped := 2, 0
	for _, k := range keys {
		b, err := json.Marshal(m[k])
		n := jsonSize(k, -1) + 1 + len(b) + 1
		if err != nil || used+n > limit-reserve {
			dropped++
			continue
		}
		used += n
		out[k] = m[k]
	}
	out["toolmw_truncated"] = map[string]any{"dropped_keys": dropped, "bytes": total}
	return out
}

// cutArguments returns a JSON object that says the arguments were cut and
// holds their first bytes as a string.
func cutArguments(args []byte, limit int) []byte {
	keep := max(limit-64, 0)
	for keep > 0 && !utf8.RuneStart(args[keep]) {
		keep--
	}
	b, err := json.Marshal(map[string]any{"toolmw_truncated": map[string]any{"bytes": len(args), "prefix": string(args[:keep])}})
	if err != nil {
		return nil
	}
	return b
}

// jsonSize estimates the size of v's JSON: keys and strings count their
// bytes plus quotes (escapes are not counted), other scalars 8 bytes. It
// stops early once the size passes stop (when stop >= 0), without
// allocating.
func jsonSize(v any, stop int) int {
	n := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			n += len(x) + 2
		case map[string]any:
			n += 2
			for k, e := range x {
				n += len(k) + 4
				if !walk(e) {
					return false
				}
			}
		case []any:
			n += 2
			for _, e := range x {
				n++
				if !walk(e) {
					return false
				}
			}
		case json.RawMessage:
			n += len(x)
		default:
			n += 8
		}
		return stop < 0 || n <= stop
	}
	walk(v)
	return n
}
