package feedback

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// OutOfRange is the problem of a number that does not fit its argument
// (1e400 for a float64, 300 for an int8).
const OutOfRange = "number out of range"

// Sentence returns "path: problem", or "the arguments: problem" when path
// is empty (the problem is with the arguments object as a whole).
func Sentence(path, problem string) string {
	if path == "" {
		path = "the arguments"
	}
	return path + ": " + problem
}

// Expected returns "expected a number, got null": want and got are JSON
// type names (null, boolean, number, integer, string, array, object) or,
// for got, a value as text.
func Expected(want, got string) string {
	return "expected " + Article(want) + ", got " + Article(got)
}

// Article gives a JSON type name its article: "a number", "an object";
// "null" and anything that is not a type name stay as they are.
func Article(typ string) string {
	switch typ {
	case "boolean", "number", "string":
		return "a " + typ
	case "bool":
		return "a boolean"
	case "integer", "array", "object":
		return "an " + typ
	}
	return typ
}

// Join appends a property name to an argument path: "o" + "x" is "o.x".
func Join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Pointer turns an instance's JSON pointer ("/o/x", "/l/1") into an
// argument path ("o.x", "l[1]"); the root ("" or "<root>") is "".
func Pointer(ptr string) string {
	if ptr == "<root>" {
		return ""
	}
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(seg); err == nil && b.Len() > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// schemaPath turns a schema location of google/jsonschema-go's errors
// ("root", "/properties/o/properties/x", "/properties/l/items") into an
// argument path ("", "o.x", "l[]").
func schemaPath(loc string) string {
	if loc == "root" {
		return ""
	}
	var b strings.Builder
	segs := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i := 0; i < len(segs); i++ {
		switch seg := segs[i]; {
		case seg == "properties" && i+1 < len(segs):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(segs[i+1])
			i++
		case seg == "items" || seg == "prefixItems" || seg == "additionalItems":
			b.WriteString("[]")
		}
	}
	return b.String()
}

var (
	sdkLocation = regexp.MustCompile(`^validating (\S+): `)
	quoted      = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// GoSDK phrases the text of a validation error of google/jsonschema-go, the
// validator of go-sdk ("validating root: validating /properties/b: type:
// <invalid reflect.Value> has type \"null\", want \"number\"" is
// "b: expected a number, got null"), from its [GoSDKProblems]: none of the
// text's own words but its schema's property names, keywords, JSON kinds
// and limits reach the sentence.
func GoSDK(msg string) string {
	return sentences(GoSDKProblems(msg))
}

// MCPGoPrefix starts every input-validation feedback of mcp-go's
// server.WithInputSchemaValidation.
const MCPGoPrefix = "input schema validation failed: "

var (
	goLocation = regexp.MustCompile(`^(<root>|(?:/[^:]*)?): `)
)

// MCPGo phrases mcp-go's input-validation feedback ("input schema
// validation failed: /b: &{Got:null Want:[number]}" is
// "b: expected a number, got null"), from its [MCPGoProblems]; a text
// without [MCPGoPrefix] (mcp-go's own decoding failure) is a fixed
// sentence.
func MCPGo(msg string) string {
	return sentences(MCPGoProblems(msg))
}

// integral reports whether the number literal n has no fractional part
// (300, 1e400), so that not fitting an integer type is a matter of range.
func integral(n string) bool {
	f, err := strconv.ParseFloat(n, 64)
	return err != nil || f == math.Trunc(f)
}

// OutOfRangeAt returns the path of the first number in raw that does not
// fit a float64 (1e400), which encoding/json reports without its field
// when it decodes into a map; "" and false when every number fits or raw
// is not JSON.
func OutOfRangeAt(raw []byte) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	return outOfRange("", v)
}

func outOfRange(path string, v any) (string, bool) {
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Float64(); err != nil {
			return path, true
		}
	case map[string]any:
		for k, e := range v {
			if p, ok := outOfRange(Join(path, k), e); ok {
				return p, true
			}
		}
	case []any:
		for i, e := range v {
			if p, ok := outOfRange(path+"["+strconv.Itoa(i)+"]", e); ok {
				return p, true
			}
		}
	}
	return "", false
}

// jsonKind is the JSON type name of a Go kind.
func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	case "float32", "float64":
		return "number"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "interface":
		return ""
	}
	return ""
}
