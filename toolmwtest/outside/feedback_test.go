package outside

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/hostileframes"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// feedbackMarkers are what only Go's internals or a validator's own
// words would put in an answer, beyond hostileframes.GoInternals.
var feedbackMarkers = append(hostileframes.GoInternals(), "<invalid", "interface{}", "&{", "*big", "0xc", "encoding/json",
	"jsonschema", "santhosh", "validating root", "validating /", "does not equal any of", "Unicode code points",
	"doesn't validate", "jsonpointer", "kaptinlin", "google/", "want \"", "has type")

// schemaGen makes random schemas with the keywords the feedback property
// test does not use (oneOf, anyOf, allOf, not, $ref into $defs, const,
// formats, type lists with null, prefixItems, uniqueItems, multipleOf,
// exclusive bounds, property counts, propertyNames, patternProperties,
// dependentRequired, if/then/else) and property names of every sort
// (unicode, JSON-pointer characters, quotes), and wrong arguments for them.
type schemaGen struct{ r *rand.Rand }

var keyNames = []string{"a", "é", "中文", "😀", "a/b", "a~b", "~1", "q\"uote", "sp ace", "back\\slash", "0", "$ref", "type", "ñ-ü"}

func (g schemaGen) key() string { return keyNames[g.r.IntN(len(keyNames))] }

func (g schemaGen) schema(depth int) map[string]any {
	leaf := []func() map[string]any{
		func() map[string]any {
			return map[string]any{"type": "integer", "multipleOf": 3, "exclusiveMinimum": 0}
		},
		func() map[string]any { return map[string]any{"type": "number", "exclusiveMaximum": 1.5} },
		func() map[string]any { return map[string]any{"type": []any{"string", "null"}, "maxLength": 2} },
		func() map[string]any { return map[string]any{"type": "null"} },
		func() map[string]any { return map[string]any{"const": "fixed"} },
		func() map[string]any { return map[string]any{"enum": []any{nil, 1, "x", true, []any{1}}} },
		func() map[string]any { return map[string]any{"type": "string", "format": "email"} },
		func() map[string]any { return map[string]any{"type": "string", "format": "date-time"} },
		func() map[string]any { return map[string]any{"type": "string", "format": "uuid"} },
		func() map[string]any {
			return map[string]any{"type": "string", "pattern": "^[α-ω]+$", "minLength": 2}
		},
		func() map[string]any { return map[string]any{"$ref": "#/$defs/pos"} },
		func() map[string]any { return map[string]any{"not": map[string]any{"type": "string"}} },
	}
	if depth == 0 {
		return leaf[g.r.IntN(len(leaf))]()
	}
	switch g.r.IntN(9) {
	case 0:
		return map[string]any{"oneOf": []any{g.schema(depth - 1), g.schema(depth - 1)}}
	case 1:
		return map[string]any{"anyOf": []any{g.schema(depth - 1), map[string]any{"type": "boolean"}}}
	case 2:
		return map[string]any{"allOf": []any{g.schema(depth - 1), map[string]any{"not": map[string]any{"type": "null"}}}}
	case 3:
		return map[string]any{"type": "array", "prefixItems": []any{g.schema(depth - 1)}, "items": g.schema(depth - 1),
			"minItems": 1, "maxItems": 3, "uniqueItems": true}
	case 4:
		return map[string]any{"if": map[string]any{"type": "string"}, "then": map[string]any{"minLength": 3}, "else": g.schema(depth - 1)}
	case 5, 6:
		return g.object(depth)
	}
	return leaf[g.r.IntN(len(leaf))]()
}

func (g schemaGen) object(depth int) map[string]any {
	props := map[string]any{}
	var req []any
	for range 1 + g.r.IntN(3) {
		k := g.key()
		if _, dup := props[k]; dup {
			continue
		}
		props[k] = g.schema(depth - 1)
		if g.r.IntN(2) == 0 {
			req = append(req, k)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(req) > 0 {
		s["required"] = req
	}
	switch g.r.IntN(6) {
	case 0:
		s["additionalProperties"] = false
	case 1:
		s["propertyNames"] = map[string]any{"maxLength": 3}
	case 2:
		s["patternProperties"] = map[string]any{"^x": map[string]any{"type": "integer"}}
	case 3:
		s["minProperties"], s["maxProperties"] = 1, 2
	case 4:
		for k := range props {
			s["dependentRequired"] = map[string]any{k: []any{"zz"}}
			break
		}
	}
	return s
}

// tool is a random tool schema: an object, with the $defs its $refs use.
func (g schemaGen) tool() map[string]any {
	s := g.object(3)
	s["$defs"] = map[string]any{"pos": map[string]any{"type": "integer", "minimum": 1}}
	return s
}

// value is a random JSON value, right or (mostly) wrong for any schema:
// numbers past float64's range included.
func (g schemaGen) value(depth int) string {
	vals := []string{`null`, `true`, `0`, `-1`, `3`, `1.5`, `1e400`, `-1e999999`, `123456789012345678901234567890`, `""`, `"a"`,
		`"αβγ"`, `"not-an-email"`, `"2026-13-45T99:00:00Z"`, `"fixed"`, `"😀"`, `"\u0000"`, `[]`, `{}`, `[1,1]`, `"x\"y"`}
	if depth == 0 || g.r.IntN(3) == 0 {
		return vals[g.r.IntN(len(vals))]
	}
	if g.r.IntN(2) == 0 {
		parts := make([]string, g.r.IntN(4))
		for i := range parts {
			parts[i] = g.value(depth - 1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return g.args(depth - 1)
}

// args is a random arguments object.
func (g schemaGen) args(depth int) string {
	var parts []string
	for range g.r.IntN(4) {
		k, _ := json.Marshal(g.key())
		parts = append(parts, string(k)+":"+g.value(depth))
	}
	if g.r.IntN(4) == 0 {
		parts = append(parts, `"x1":"notint"`, `"zzzz":1`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestFeedbackFromOutsideNamesNoGoInternals: random schemas with the
// keywords and property names the feedback property test does not use,
// and random wrong arguments, through both SDKs on every transport: no
// byte a client receives names a Go type, reflect, a package path, "json:"
// or a validator's raw text, and an isError answer the adapter built is
// invalid-arguments feedback with its structured detail.
func TestFeedbackFromOutsideNamesNoGoInternals(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	each(t, func(t *testing.T, sdk, tr string) {
		g := schemaGen{r: rand.New(rand.NewPCG(seed, uint64(len(sdk+tr))))}
		ok := toolctx.HandlerFunc(func(_ context.Context, _ *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
		tools := map[string]tool{}
		schemas := map[string]string{}
		for i := range 16 {
			b, err := json.Marshal(g.tool())
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("t%d", i)
			tools[name], schemas[name] = tool{schema: string(b), h: ok}, string(b)
		}
		c := serve(t, sdk, tr, middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.Recover), tools)
		calls, invalid, noDetail := 0, 0, 0
		for name := range tools {
			for range 6 {
				args := g.args(3)
				a := c.Call(t, name, args, nil)
				calls++
				got := string(a.Wire) + string(a.Result)
				if a.Err != nil {
					got += a.Err.Error()
				}
				for _, m := range feedbackMarkers {
					if !assert.NotContains(t, got, m, "%s %s\nschema %s\nanswered with Go's or a validator's internals", name, args, schemas[name]) {
						t.FailNow()
					}
				}
				if a.Err == nil && strings.Contains(string(a.Result), `"isError":true`) {
					invalid++
					assert.Contains(t, string(a.Result), "invalid arguments", "%s %s: an isError answer is invalid-arguments feedback: %s", name, args, a.Result)
					assert.Contains(t, string(a.Result), `"code":"invalid_arguments"`, "%s %s: the structured feedback reaches the client: %s", name, args, a.Result)
					if !strings.Contains(string(a.Result), `"detail":`) {
						noDetail++
					}
				}
			}
		}
		t.Logf("%d calls, %d answered with invalid-arguments feedback, %d of them without structured detail", calls, invalid, noDetail)
		assert.Zero(t, noDetail, "every invalid-arguments answer carries its problems as data")
		assert.NotZero(t, invalid, "some arguments were wrong")
	})
}
