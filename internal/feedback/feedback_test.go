package feedback

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The texts are the validators' own, as printed by go-sdk v1.8.0
// (google/jsonschema-go v0.4.3) and mcp-go v1.2.1 for the same schema.
func TestGoSDK(t *testing.T) {
	for in, want := range map[string]string{
		`validating root: validating /properties/b: type: <invalid reflect.Value> has type "null", want "number"`:                      "b: expected a number, got null",
		`validating root: validating /properties/b: type: two has type "string", want "number"`:                                        "b: expected a number, got a string",
		`validating root: required: missing properties: ["a" "b"]`:                                                                     "a: required, but missing; b: required, but missing",
		`validating root: unexpected additional properties ["x"]`:                                                                      "x: not an argument of this tool",
		`validating root: validating /properties/a: minimum: -1/1 is less than 0.000000`:                                               "a: must be at least 0",
		`validating root: validating /properties/a: exclusiveMaximum: 5/1 is greater than or equal to 5.000000`:                        "a: must be less than 5",
		`validating root: validating /properties/s: maxLength: "abc" contains 3 Unicode code points, more than 2`:                      "s: must be at most 2 characters",
		`validating root: validating /properties/l: validating /properties/l/items: type: x has type "string", want "integer"`:         "l[]: expected an integer, got a string",
		`validating root: validating /properties/o: validating /properties/o/properties/x: type: 1 has type "integer", want "boolean"`: "o.x: expected a boolean, got an integer",
		`validating root: validating /properties/c: enum: x does not equal any of: [a b]`:                                              "c: must be one of the values the input schema lists",
		`something else entirely`: "the arguments: does not satisfy the input schema",
	} {
		assert.Equal(t, want, GoSDK(in), "from %q", in)
	}
}

func TestMCPGo(t *testing.T) {
	for in, want := range map[string]string{
		"input schema validation failed: /b: &{Got:null Want:[number]}":                                "b: expected a number, got null",
		"input schema validation failed: /b: &{Got:string Want:[number integer]}":                      "b: expected a number or an integer, got a string",
		"input schema validation failed: <root>: &{Missing:[a b]}":                                     "a: required, but missing; b: required, but missing",
		"input schema validation failed: <root>: &{Properties:[x]}":                                    "x: not an argument of this tool",
		"input schema validation failed: /l/1: &{Got:string Want:[integer]}":                           "l[1]: expected an integer, got a string",
		"input schema validation failed: /o/x: &{Got:number Want:[boolean]}; /a: &{Got:-1/1 Want:0/1}": "o.x: expected a boolean, got a number; a: must be at least 0",
		"the arguments: expected a JSON object":                                                        "the arguments: expected a JSON object",
	} {
		assert.Equal(t, want, MCPGo(in), "from %q", in)
	}
}

// JSONProblems is the one phrasing of an encoding/json error of decoding
// the arguments: problems as data, and sentences built from them.
func TestJSONProblems(t *testing.T) {
	type inner struct {
		X bool `json:"x"`
	}
	type args struct {
		A float64 `json:"a"`
		N int8    `json:"n"`
		I int     `json:"i"`
		S string  `json:"s"`
		O inner   `json:"o"`
	}
	for in, want := range map[string]string{
		`{"a":1e400}`:   "a: " + OutOfRange,
		`{"n":300}`:     "n: " + OutOfRange,
		`{"i":1.5}`:     "i: expected an integer, got a number",
		`{"s":3}`:       "s: expected a string, got a number",
		`{"o":{"x":1}}`: "o.x: expected a boolean, got a number",
		`[1]`:           "the arguments: expected a JSON object, got an array",
		`{"a":`:         "the arguments: expected a complete JSON object",
	} {
		var v args
		err := json.Unmarshal([]byte(in), &v)
		require.Error(t, err, in)
		problems, ok := JSONProblems(err, []byte(in))
		assert.True(t, ok, "%s: %v", in, err)
		assert.Equal(t, "invalid arguments: "+want, Message(problems), "from %s (%v)", in, err)
	}
	var m map[string]any
	problems, ok := JSONProblems(json.Unmarshal([]byte(`{"a":1e400}`), &m), []byte(`{"a":1e400}`))
	assert.True(t, ok)
	assert.Equal(t, "invalid arguments: a: number out of range", Message(problems), "into a map, the path is found in the arguments")
	path, ok := OutOfRangeAt([]byte(`{"b":1,"o":{"l":[2,-1e999]}}`))
	assert.True(t, ok)
	assert.Equal(t, "o.l[1]", path, "OutOfRangeAt finds it")
	_, ok = OutOfRangeAt([]byte(`{"b":1e300}`))
	assert.False(t, ok, "every number fits")
	problems, ok = JSONProblems(json.Unmarshal([]byte(`{"a":}`), &m), []byte(`{"a":}`))
	assert.True(t, ok)
	assert.Contains(t, Message(problems), "malformed at byte")
	_, ok = JSONProblems(assert.AnError, nil)
	assert.False(t, ok, "an error that is not about the JSON")
}

func TestPointer(t *testing.T) {
	for in, want := range map[string]string{"": "", "<root>": "", "/a": "a", "/o/x": "o.x", "/l/1": "l[1]", "/a~1b": "a/b", "/0": "0"} {
		assert.Equal(t, want, Pointer(in), "from %q", in)
	}
}

// The problems are data: path, rule, expected and got, never the
// validator's text; the detail a client receives holds only them.
func TestProblems(t *testing.T) {
	for in, want := range map[string][]Problem{
		`validating root: validating /properties/b: type: <invalid reflect.Value> has type "null", want "number"`:               {{Path: "b", Rule: "type", Expected: "number", Got: "null"}},
		`validating root: validating /properties/b: type: x has type "string", want one of ["number" "integer"]`:                {{Path: "b", Rule: "type", Expected: "number or integer", Got: "string"}},
		`validating root: required: missing properties: ["a" "b"]`:                                                              {{Path: "a", Rule: "required", Expected: "present", Got: "missing"}, {Path: "b", Rule: "required", Expected: "present", Got: "missing"}},
		`validating root: validating /properties/c: enum: <invalid reflect.Value> does not equal any of: [a b]`:                 {{Path: "c", Rule: "enum", Expected: "one of the values the input schema lists"}},
		`validating root: validating /properties/n: minimum: -1/1 is less than 0.000000`:                                        {{Path: "n", Rule: "minimum", Expected: "at least 0", Got: "number"}},
		`validating root: validating /properties/l: minItems: array length 1 is less than 2`:                                    {{Path: "l", Rule: "minItems", Expected: "at least 2 items", Got: "array"}},
		`validating root: validating /properties/s: pattern: "map[string]interface {}" does not match regular expression "^a$"`: {{Path: "s", Rule: "pattern", Expected: "a string that matches the input schema's pattern", Got: "string"}},
		`validating root: unknownKeyword: reflect.Value float64 github.com/x/y`:                                                 {{Rule: "schema"}},
	} {
		got := GoSDKProblems(in)
		assert.Equal(t, want, got, "from %q", in)
		assertClean(t, Message(got), Detail(got))
	}
	for in, want := range map[string][]Problem{
		"input schema validation failed: /b: &{Got:null Want:[number]}":           {{Path: "b", Rule: "type", Expected: "number", Got: "null"}},
		"input schema validation failed: /a: &{Got:7/1 Want:5/1}":                 {{Path: "a", Rule: "bound", Expected: "at most 5", Got: "number"}},
		"input schema validation failed: /s: &{Got:3 Want:2}":                     {{Path: "s", Rule: "size", Expected: "at most 2"}},
		"input schema validation failed: /c: &{Got:x Want:[map[a:1] b]}":          {{Path: "c", Rule: "schema"}},
		"input schema validation failed: /f: &{Got:x Want:email Err:0xc0}":        {{Path: "f", Rule: "schema"}},
		"invalid arguments: json: cannot unmarshal into Go value of type float64": {{Rule: "json", Expected: "a JSON object"}},
	} {
		got := MCPGoProblems(in)
		assert.Equal(t, want, got, "from %q", in)
		assertClean(t, Message(got), Detail(got))
	}
	var m map[string]any
	got, ok := JSONProblems(json.Unmarshal([]byte(`{"extra":1e999999}`), &m), []byte(`{"extra":1e999999}`))
	require.True(t, ok)
	assert.Equal(t, []Problem{{Path: "extra", Rule: "range", Expected: "a number the tool can hold", Got: "number"}}, got)
	assert.Equal(t, "invalid arguments: extra: number out of range", Message(got))
	assert.Equal(t, map[string]any{"problems": []any{map[string]any{"path": "extra", "rule": "range", "expected": "a number the tool can hold", "got": "number"}}}, Detail(got))
}

// assertClean fails when what a client would receive names Go internals.
func assertClean(t *testing.T, msg string, detail map[string]any) {
	t.Helper()
	b, err := json.Marshal(detail)
	require.NoError(t, err)
	for _, s := range []string{msg, string(b)} {
		for _, marker := range []string{"reflect", "float64", "interface {}", "map[", "&{", "github.com/", "Go value", "0xc0", "json: "} {
			assert.NotContains(t, s, marker)
		}
	}
}
