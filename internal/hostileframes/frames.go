package hostileframes

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// GoInternals are strings of Go's and its JSON decoders' own vocabulary:
// type names, struct fields, package paths, decoder text.
func GoInternals() []string {
	return []string{"json:", "Go struct", "Go value", "reflect", "of type", "float64", "int64", "mcp.", "*mcp", "jsonrpc2",
		"github.com/", "interface {}", "map[string]", "unmarshal", "Unmarshal", "goroutine ", "segmentio", ".go:", "[]uint8", "RawMessage"}
}

// Request is a tools/call frame with the given id and params, as text.
func Request(id, method, params string) string {
	f := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		f += `,"params":` + params
	}
	return f + "}"
}

// Envelopes are frames whose envelope is hostile: ids of odd types, a
// wrong version, a method that is not a string, batches, invalid JSON,
// nesting beyond every decoder's bound, truncation.
func Envelopes() map[string]string {
	call := `"method":"tools/call","params":{"name":"echo","arguments":{"x":"a"}}`
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	return map[string]string{
		"id an object":            `{"jsonrpc":"2.0","id":{},` + call + `}`,
		"id an array":             `{"jsonrpc":"2.0","id":[1],` + call + `}`,
		"id true":                 `{"jsonrpc":"2.0","id":true,` + call + `}`,
		"id a huge number":        `{"jsonrpc":"2.0","id":1e999999,` + call + `}`,
		"id an object holding":    `{"jsonrpc":"2.0","id":{"a":1e999999},` + call + `}`,
		"jsonrpc 1.0":             `{"jsonrpc":"1.0","id":2,` + call + `}`,
		"jsonrpc a number":        `{"jsonrpc":2,"id":2,` + call + `}`,
		"jsonrpc missing":         `{"id":2,` + call + `}`,
		"method a number":         `{"jsonrpc":"2.0","id":2,"method":5}`,
		"method an object":        `{"jsonrpc":"2.0","id":2,"method":{"a":1}}`,
		"method null":             `{"jsonrpc":"2.0","id":2,"method":null}`,
		"error a number":          `{"jsonrpc":"2.0","id":2,"error":5}`,
		"error code a string":     `{"jsonrpc":"2.0","id":2,"error":{"code":"x","message":"m"}}`,
		"result without id":       `{"jsonrpc":"2.0","result":{}}`,
		"frame a number":          `5`,
		"frame a string":          `"tools/call"`,
		"frame null":              `null`,
		"empty batch":             `[]`,
		"batch of a bad id":       `[{"jsonrpc":"2.0","id":{},` + call + `}]`,
		"batch of bad params":     `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}]`,
		"batch of a number":       `[5]`,
		"batch nested":            `[[{"jsonrpc":"2.0","id":3,` + call + `}]]`,
		"truncated":               `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ec`,
		"not JSON":                `{jsonrpc: 2.0}`,
		"trailing garbage":        `{"jsonrpc":"2.0","id":2,` + call + `} x`,
		"control char in string":  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"e\x01cho\"}}",
		"invalid UTF-8":           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"ec\xffho\",\"arguments\":{\"x\":\"\xfe\"}}}",
		"invalid UTF-8 key":       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"na\xffme\":\"echo\"}}",
		"duplicate keys":          `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","name":5,"arguments":{"x":"a","x":1e999999}}}`,
		"duplicate ids":           `{"jsonrpc":"2.0","id":2,"id":{},` + call + `}`,
		"deep nesting 1001":       `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":` + deep(1001) + `}}}`,
		"deep nesting 10001":      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":` + deep(10001) + `}}}`,
		"escaped key":             `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"n\u0061me":5}}`,
		"upper-case keys":         `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"NAME":5,"Arguments":[1e999999]}}`,
		"huge number in _meta":    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1e999999}}}`,
		"huge number arguments":   `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1e999999}}}`,
		"bad notification":        `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e999999,"reason":5}}`,
		"bad progress":            `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":"x"}}`,
		"unknown method bad JSON": `{"jsonrpc":"2.0","id":2,"method":"no/such","params":{"a":1e999999}}`,
	}
}

// Params are, for each method, requests whose params are not an object
// (a string, a number, true, an array), and, for each JSON field of the
// method's params type t (embedded structs followed, nested structs to
// depth 2), a request with that field of each wrong JSON type and of a
// number beyond float64's range. The keys name the method and the shape.
func Params(method string, t reflect.Type) map[string]string {
	out := map[string]string{}
	for _, p := range []string{`"str"`, `5`, `true`, `[]`, `[{"name":"echo"}]`} {
		out[method+" params "+p] = Request("7", method, p)
	}
	for path, vals := range wrongFields(t, 2) {
		for _, v := range vals {
			out[method+" "+path+"="+v] = Request("7", method, nest(path, v))
		}
	}
	return out
}

// nest builds {"a":{"b":v}} from the path "a.b".
func nest(path, v string) string {
	keys := strings.Split(path, ".")
	s := v
	for i := len(keys) - 1; i >= 0; i-- {
		k, _ := json.Marshal(keys[i])
		s = "{" + string(k) + ":" + s + "}"
	}
	return s
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// wrongFields maps each field path of t to values of JSON types its Go
// type refuses.
func wrongFields(t reflect.Type, depth int) map[string][]string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	out := map[string][]string{}
	if t.Kind() != reflect.Struct {
		return out
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" {
			for k, v := range wrongFields(ft, depth) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = wrongValues(ft)
		if depth > 1 && ft.Kind() == reflect.Struct {
			for k, v := range wrongFields(ft, depth-1) {
				out[name+"."+k] = v
			}
		}
	}
	return out
}

func wrongValues(t reflect.Type) []string {
	if t == rawMessage {
		return nil // any JSON value
	}
	switch t.Kind() {
	case reflect.String:
		return []string{`5`, `{}`, `[]`, `true`}
	case reflect.Bool:
		return []string{`"x"`, `5`}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []string{`"x"`, `1.5`, `1e999999`, `-1`, `{}`}
	case reflect.Float32, reflect.Float64:
		return []string{`"x"`, `1e999999`, `[]`}
	case reflect.Struct:
		return []string{`5`, `"x"`, `[]`}
	case reflect.Map:
		return []string{`5`, `"x"`, `[]`, `{"k":1e999999}`}
	case reflect.Slice, reflect.Array:
		return []string{`5`, `"x"`, `{}`, `[1e999999]`}
	case reflect.Interface:
		return []string{`1e999999`, `[1e999999]`}
	}
	return nil
}

// Sorted returns the keys of m in order, so that a test's runs are alike.
func Sorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
