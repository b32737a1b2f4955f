package feedback

import (
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a call's arguments, as data: what a
// client (or the model behind it) needs to fix the call, built from the
// validator's or decoder's structured findings and never from its text
// (which quotes Go values, Go type names and package paths). Every field
// holds only the argument path, a JSON Schema keyword, a JSON kind, a
// number from the schema or a fixed phrase.
type Problem struct {
	// Path is the argument at fault: "b", "o.x", "l[1]", "l[]" (an item of
	// l, when the validator does not say which); "" is the arguments
	// object as a whole.
	Path string
	// Rule is what failed: the JSON Schema keyword ("type", "required",
	// "additionalProperties", "minimum", "maxLength", "enum", ...),
	// "bound" or "size" when the validator says a limit was crossed but not
	// which keyword set it, "schema" when it says nothing usable, or
	// "json" (the arguments are not a well-formed JSON object) and "range"
	// (a number the tool cannot hold).
	Rule string
	// Expected is what the rule asks for, in JSON terms: a JSON kind
	// ("number", "number or integer"), a limit ("at least 0", "at most 2
	// characters"), "present", "absent", ...; "" when the validator does
	// not say.
	Expected string
	// Got is the JSON kind of what was sent (null, boolean, number,
	// integer, string, array, object), "missing", or "" when unknown.
	Got string
}

// Sentence is the problem as a sentence about the argument, as a model
// reads it: "b: expected a number, got null".
func (p Problem) Sentence() string {
	switch p.Rule {
	case "type":
		want := strings.Split(p.Expected, " or ")
		for i := range want {
			want[i] = Article(want[i])
		}
		return Sentence(p.Path, "expected "+strings.Join(want, " or ")+", got "+Article(p.Got))
	case "required":
		return Sentence(p.Path, "required, but missing")
	case "additionalProperties":
		return Sentence(p.Path, "not an argument of this tool")
	case "range":
		return Sentence(p.Path, OutOfRange)
	case "json":
		if p.Got != "" {
			return Sentence(p.Path, "expected a "+p.Expected+", got "+Article(p.Got))
		}
		return Sentence(p.Path, "expected "+p.Expected)
	}
	if p.Expected != "" {
		return Sentence(p.Path, "must be "+p.Expected)
	}
	if p.Rule == "schema" {
		return Sentence(p.Path, "does not satisfy the input schema")
	}
	return Sentence(p.Path, "does not satisfy the input schema's "+p.Rule)
}

// Message is the public message of problems: "invalid arguments: " and
// their sentences, separated by "; ".
func Message(problems []Problem) string {
	return "invalid arguments: " + sentences(problems)
}

// sentences is the problems' sentences, separated by "; ".
func sentences(problems []Problem) string {
	s := make([]string, len(problems))
	for i, p := range problems {
		s[i] = p.Sentence()
	}
	if len(s) == 0 {
		return Sentence("", "do not satisfy the input schema")
	}
	return strings.Join(s, "; ")
}

// Detail is the public detail of problems: {"problems": [{"path": "b",
// "rule": "type", "expected": "number", "got": "null"}, ...]}, with a field
// left out where it is empty ("path" is always there).
func Detail(problems []Problem) map[string]any {
	list := make([]any, 0, len(problems))
	for _, p := range problems {
		m := map[string]any{"path": p.Path, "rule": p.Rule}
		if p.Expected != "" {
			m["expected"] = p.Expected
		}
		if p.Got != "" {
			m["got"] = p.Got
		}
		list = append(list, m)
	}
	return map[string]any{"problems": list}
}

// kinds are the JSON kinds a validator may name.
var kinds = map[string]bool{"null": true, "boolean": true, "number": true, "integer": true, "string": true, "array": true, "object": true}

// kind returns s when it is a JSON kind, and "" otherwise.
func kind(s string) string {
	if kinds[s] {
		return s
	}
	return ""
}

// keywords are the JSON Schema keywords a Rule may name.
var keywords = map[string]string{
	"type": "", "enum": "one of the values the input schema lists", "const": "the value the input schema fixes",
	"multipleOf": "", "minimum": "", "maximum": "", "exclusiveMinimum": "", "exclusiveMaximum": "",
	"minLength": "", "maxLength": "", "pattern": "a string that matches the input schema's pattern",
	"format": "in the format the input schema names", "anyOf": "valid against one of the input schema's alternatives",
	"oneOf": "valid against exactly one of the input schema's alternatives", "allOf": "valid against all of the input schema's parts",
	"not": "", "contains": "", "minContains": "", "maxContains": "", "minItems": "", "maxItems": "",
	"uniqueItems": "an array without duplicate items", "required": "", "dependentRequired": "", "dependencies": "",
	"minProperties": "", "maxProperties": "", "additionalProperties": "", "propertyNames": "", "items": "",
	"prefixItems": "", "additionalItems": "", "unevaluatedProperties": "", "unevaluatedItems": "",
	"if": "", "then": "", "else": "", "$ref": "", "dependentSchemas": "", "patternProperties": "",
}

var (
	sdkTypeOf  = regexp.MustCompile(`has type "(\w+)", want (?:one of )?(.+)$`)
	lastNumber = regexp.MustCompile(`(-?[0-9][0-9.eE+-]*)$`)
	lastInt    = regexp.MustCompile(`([0-9]+)$`)
)

// GoSDKProblems reads the problems out of a validation error's text of
// google/jsonschema-go, go-sdk's validator, which has no structured error:
// only its schema locations (the published schema's property names), its
// keyword, the JSON kinds and the limits it quotes from the schema are
// taken, checked against what they can be; the instance's value, which the
// text prints with Go's formatting ("<invalid reflect.Value>"), never is.
func GoSDKProblems(msg string) []Problem {
	loc := "root"
	for {
		m := sdkLocation.FindStringSubmatch(msg)
		if m == nil {
			break
		}
		loc, msg = m[1], msg[len(m[0]):]
	}
	path := schemaPath(loc)
	if rest, ok := strings.CutPrefix(msg, "unexpected additional properties "); ok {
		return named(path, rest, Problem{Rule: "additionalProperties", Expected: "absent"})
	}
	keyword, rest, ok := strings.Cut(msg, ": ")
	if i := strings.IndexByte(keyword, '['); i > 0 {
		keyword = keyword[:i] // dependentRequired["a"]
	}
	fixed, known := keywords[keyword]
	if !ok || !known {
		return []Problem{{Path: path, Rule: "schema"}}
	}
	p := Problem{Path: path, Rule: keyword, Expected: fixed}
	switch keyword {
	case "type":
		if m := sdkTypeOf.FindStringSubmatch(rest); m != nil {
			p.Got = kind(m[1])
			var want []string
			for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
				if k := kind(q[1]); k != "" {
					want = append(want, k)
				}
			}
			p.Expected = strings.Join(want, " or ")
		}
	case "required", "dependentRequired":
		if list, found := strings.CutPrefix(rest, "missing properties "); found {
			rest = list
		}
		return named(path, strings.TrimPrefix(rest, "missing properties: "), Problem{Rule: "required", Expected: "present", Got: "missing"})
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		p.Got, p.Expected = "number", bound(keyword, lastNumber.FindString(rest))
	case "minLength", "maxLength":
		p.Got, p.Expected = "string", size(keyword, lastInt.FindString(rest), "characters")
	case "minItems", "maxItems", "minContains", "maxContains":
		p.Got, p.Expected = "array", size(keyword, lastInt.FindString(rest), "items")
	case "minProperties", "maxProperties":
		p.Got, p.Expected = "object", size(keyword, lastInt.FindString(rest), "properties")
	case "pattern", "format":
		p.Got = "string"
	case "uniqueItems":
		p.Got = "array"
	}
	return []Problem{p}
}

// named is one problem like p for each name quoted in list, at path.name.
func named(path, list string, p Problem) []Problem {
	var out []Problem
	for _, m := range quoted.FindAllStringSubmatch(list, -1) {
		name, err := strconv.Unquote(`"` + m[1] + `"`)
		if err != nil {
			continue
		}
		q := p
		q.Path = Join(path, name)
		out = append(out, q)
	}
	if len(out) == 0 {
		p.Path = path
		out = append(out, p)
	}
	return out
}

// bound is what a numeric keyword with limit asks for: "at least 0".
func bound(keyword, limit string) string {
	f, err := strconv.ParseFloat(limit, 64)
	if err != nil {
		return ""
	}
	words := map[string]string{"minimum": "at least ", "maximum": "at most ", "exclusiveMinimum": "greater than ",
		"exclusiveMaximum": "less than ", "multipleOf": "a multiple of "}[keyword]
	return words + strconv.FormatFloat(f, 'g', -1, 64)
}

// size is what a counting keyword with limit asks for: "at most 2
// characters".
func size(keyword, limit, unit string) string {
	if limit == "" {
		return ""
	}
	if strings.HasPrefix(keyword, "min") {
		return "at least " + limit + " " + unit
	}
	return "at most " + limit + " " + unit
}

var (
	goKindType  = regexp.MustCompile(`^&\{Got:(\w+) Want:\[([\w ]*)\]\}$`)
	goKindNames = regexp.MustCompile(`^&\{(Missing|Properties):\[([^\]]*)\]\}$`)
	goKindRats  = regexp.MustCompile(`^&\{Got:(-?\d+/\d+) Want:(-?\d+/\d+)\}$`)
	goKindInts  = regexp.MustCompile(`^&\{Got:(\d+) Want:(\d+)\}$`)
)

// MCPGoProblems reads the problems out of mcp-go's input-validation text
// ("input schema validation failed: /b: &{Got:null Want:[number]}"),
// santhosh-tekuri/jsonschema's errors as mcp-go prints them (their Go
// values, with %+v). Only the instance location (the keys the caller sent),
// the JSON kinds, the property names and the numbers of a limit are taken,
// when the part has one of the shapes of those errors; anything else is a
// problem of rule "schema" at its location, and a text without
// [MCPGoPrefix] one problem about the arguments as a whole. mcp-go prints
// a limit without its keyword: a crossed number limit is rule "bound", a
// crossed count "size".
func MCPGoProblems(text string) []Problem {
	rest, ok := strings.CutPrefix(text, MCPGoPrefix)
	if !ok {
		return []Problem{{Rule: "json", Expected: "a JSON object"}}
	}
	var out []Problem
	for _, part := range strings.Split(rest, "; ") {
		m := goLocation.FindStringSubmatch(part)
		if m == nil {
			continue // the rest of a part whose value held "; "
		}
		path, k := Pointer(m[1]), part[len(m[0]):]
		switch {
		case goKindType.MatchString(k) && kind(goKindType.FindStringSubmatch(k)[1]) != "" && allKinds(goKindType.FindStringSubmatch(k)[2]):
			g := goKindType.FindStringSubmatch(k)
			out = append(out, Problem{Path: path, Rule: "type", Expected: strings.Join(strings.Fields(g[2]), " or "), Got: g[1]})
		case goKindNames.MatchString(k):
			g := goKindNames.FindStringSubmatch(k)
			p := Problem{Rule: "required", Expected: "present", Got: "missing"}
			if g[1] == "Properties" {
				p = Problem{Rule: "additionalProperties", Expected: "absent"}
			}
			for _, name := range strings.Fields(g[2]) {
				q := p
				q.Path = Join(path, name)
				out = append(out, q)
			}
		case goKindRats.MatchString(k):
			g := goKindRats.FindStringSubmatch(k)
			out = append(out, Problem{Path: path, Rule: "bound", Expected: crossed(g[1], g[2]), Got: "number"})
		case goKindInts.MatchString(k):
			g := goKindInts.FindStringSubmatch(k)
			got, _ := strconv.Atoi(g[1])
			want, _ := strconv.Atoi(g[2])
			p := Problem{Path: path, Rule: "size", Expected: "at least " + g[2]}
			if got > want {
				p.Expected = "at most " + g[2]
			}
			out = append(out, p)
		default:
			out = append(out, Problem{Path: path, Rule: "schema"})
		}
	}
	if len(out) == 0 {
		out = append(out, Problem{Rule: "schema"})
	}
	return out
}

// allKinds reports whether every word of list is a JSON kind.
func allKinds(list string) bool {
	words := strings.Fields(list)
	for _, w := range words {
		if kind(w) == "" {
			return false
		}
	}
	return len(words) > 0
}

// crossed is what a number limit asks for, from the number sent and the
// limit (rationals, as big.Rat prints them): "at least 0", "at most 5", or
// "not 5" for an exclusive limit hit exactly.
func crossed(got, want string) string {
	g, ok1 := new(big.Rat).SetString(got)
	w, ok2 := new(big.Rat).SetString(want)
	if !ok1 || !ok2 {
		return ""
	}
	f, _ := w.Float64()
	limit := strconv.FormatFloat(f, 'g', -1, 64)
	switch g.Cmp(w) {
	case -1:
		return "at least " + limit
	case 1:
		return "at most " + limit
	}
	return "not " + limit
}

// JSONProblems reads the problems out of an encoding/json error of
// decoding the arguments, from its structured error (its field path, the
// kind of the Go value it wanted, the JSON it got): ok is false for an error
// that is not about the arguments' content. raw is the arguments: a number
// out of range that encoding/json reports without its field (decoding into
// a map) is looked up in them.
func JSONProblems(err error, raw []byte) (problems []Problem, ok bool) {
	var (
		typeErr   *json.UnmarshalTypeError
		syntaxErr *json.SyntaxError
	)
	switch {
	case errors.As(err, &typeErr):
		path := typeErr.Field
		got, isNumber := strings.CutPrefix(typeErr.Value, "number ")
		want := ""
		if typeErr.Type != nil {
			want = jsonKind(typeErr.Type.Kind().String())
		}
		switch {
		case isNumber && want == "integer" && !integral(got):
			return []Problem{{Path: path, Rule: "type", Expected: "integer", Got: "number"}}, true
		case isNumber && (want == "integer" || want == "number" || want == ""):
			if path == "" {
				path, _ = OutOfRangeAt(raw)
			}
			return []Problem{{Path: path, Rule: "range", Expected: "a number the tool can hold", Got: "number"}}, true
		case path == "" && want == "object":
			return []Problem{{Rule: "json", Expected: "JSON object", Got: kind(jsonValueKind(typeErr.Value))}}, true
		}
		return []Problem{{Path: path, Rule: "type", Expected: want, Got: kind(jsonValueKind(typeErr.Value))}}, true
	case errors.As(err, &syntaxErr) && syntaxErr.Error() == "unexpected end of JSON input",
		errors.Is(err, io.ErrUnexpectedEOF):
		return []Problem{{Rule: "json", Expected: "a complete JSON object"}}, true
	case errors.As(err, &syntaxErr):
		return []Problem{{Rule: "json", Expected: "well-formed JSON (malformed at byte " + strconv.FormatInt(syntaxErr.Offset, 10) + ")"}}, true
	}
	return nil, false
}

// jsonValueKind is the JSON kind of encoding/json's description of a value
// ("string", "number 1.5", "bool").
func jsonValueKind(v string) string {
	switch {
	case v == "bool":
		return "boolean"
	case strings.HasPrefix(v, "number"):
		return "number"
	}
	return v
}
