package feedback_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	gclient "github.com/mark3labs/mcp-go/client"
	gmcp "github.com/mark3labs/mcp-go/mcp"
	gserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// markers are what only Go's internals would put in an answer: a Go type
// name, a Go value's print, a package path, a validator's or decoder's own
// words. The property test's names and values never hold one.
var markers = []string{
	"reflect", "<invalid", "Go value", "Go struct", "float64", "int64", "int8", "interface {}", "interface{}",
	"map[", "&{", "*big", "0xc", "github.com/", "encoding/json", "json: ", "jsonschema", "santhosh",
	"unmarshal", "validating root", "Unicode code points", "does not equal any of",
}

// gen makes random schemas and random arguments, most of them wrong.
// inRange leaves out numbers a float64 cannot hold.
type gen struct {
	r       *rand.Rand
	inRange bool
}

func (g gen) name() string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	n := 1 + g.r.IntN(6)
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[g.r.IntN(len(letters))]
	}
	return string(b)
}

// schema is a random schema of a property, depth levels of nesting at
// most.
func (g gen) schema(depth int) map[string]any {
	kinds := []string{"number", "integer", "string", "boolean", "array", "object"}
	if depth == 0 {
		kinds = kinds[:4]
	}
	s := map[string]any{"type": kinds[g.r.IntN(len(kinds))]}
	switch s["type"] {
	case "number", "integer":
		switch g.r.IntN(5) {
		case 0:
			s["minimum"] = g.r.IntN(10)
		case 1:
			s["maximum"] = g.r.IntN(10)
		case 2:
			s["exclusiveMinimum"] = g.r.IntN(10)
		case 3:
			s["enum"] = []any{1, 2, 3}
		}
	case "string":
		switch g.r.IntN(5) {
		case 0:
			s["minLength"] = 1 + g.r.IntN(4)
		case 1:
			s["maxLength"] = g.r.IntN(3)
		case 2:
			s["pattern"] = "^[a-c]+$"
		case 3:
			s["enum"] = []any{"red", "green"}
		}
	case "array":
		s["items"] = g.schema(depth - 1)
		if g.r.IntN(2) == 0 {
			s["minItems"] = 1 + g.r.IntN(3)
		}
	case "object":
		props := map[string]any{}
		var req []string
		for range 1 + g.r.IntN(3) {
			n := g.name()
			if _, dup := props[n]; dup {
				// A name drawn twice: "required" must list each name
				// once, or the schema does not compile (a seed of the
				// mcp-go run drew ["vsli","k","k"]).
				continue
			}
			props[n] = g.schema(depth - 1)
			if g.r.IntN(2) == 0 {
				req = append(req, n)
			}
		}
		s["properties"] = props
		if len(req) > 0 {
			s["required"] = req
		}
		if g.r.IntN(2) == 0 {
			s["additionalProperties"] = false
		}
	}
	return s
}

// value is random JSON text, of any kind, for a property of schema s
// (nil: a property the schema does not know).
func (g gen) value(s map[string]any, depth int) string {
	switch g.r.IntN(12) {
	case 0:
		return "null"
	case 1:
		return "true"
	case 2:
		if g.inRange {
			return "1e300"
		}
		return "1e999999"
	case 3:
		if g.inRange {
			return "-1e300"
		}
		return "-1e400"
	case 4:
		return "1.5"
	case 5:
		return fmt.Sprint(g.r.IntN(20) - 5)
	case 6:
		return `"` + g.name() + `"`
	case 7:
		return `""`
	case 8:
		return "[" + g.value(nil, 0) + "," + g.value(nil, 0) + "]"
	case 9:
		return "{}"
	}
	if s != nil && depth > 0 {
		switch s["type"] {
		case "object":
			return g.object(s, depth-1)
		case "array":
			items, _ := s["items"].(map[string]any)
			return "[" + g.value(items, depth-1) + "]"
		}
	}
	return `{"` + g.name() + `":` + g.value(nil, 0) + "}"
}

// object is random arguments for the object schema s: each property sent
// or left out, an extra one now and then.
func (g gen) object(s map[string]any, depth int) string {
	props, _ := s["properties"].(map[string]any)
	var parts []string
	for n, ps := range props {
		if g.r.IntN(4) == 0 {
			continue
		}
		sub, _ := ps.(map[string]any)
		parts = append(parts, fmt.Sprintf("%q:%s", n, g.value(sub, depth)))
	}
	if g.r.IntN(3) == 0 {
		parts = append(parts, fmt.Sprintf("%q:%s", "x"+g.name(), g.value(nil, 0)))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// tool is a random tool schema: an object at the root.
func (g gen) tool() map[string]any {
	for {
		s := g.schema(2)
		if s["type"] == "object" {
			return s
		}
	}
}

// typedArgs is what the typed tools take.
type typedArgs struct {
	A float64          `json:"a"`
	N int8             `json:"n"`
	S string           `json:"s"`
	L []int            `json:"l"`
	O struct{ X bool } `json:"o"`
}

// answered is what a client received of one call, as text: the result's
// JSON, or the error's text.
type answered struct {
	call string
	text string
}

// checkAnswers fails for an answer that names Go's internals, and for an
// isError answer that is not invalid-arguments feedback.
func checkAnswers(t *testing.T, sdk string, answers []answered) {
	t.Helper()
	failures := 0
	for _, a := range answers {
		for _, m := range markers {
			if !assert.NotContains(t, a.text, m, "%s: %s answered with Go's internals", sdk, a.call) {
				failures++
			}
		}
		if strings.Contains(a.text, `"isError":true`) {
			assert.Contains(t, a.text, "invalid arguments: ", "%s: %s: an isError answer is invalid-arguments feedback", sdk, a.call)
		}
		if failures > 20 {
			t.Fatalf("%s: too many failures", sdk)
		}
	}
}

// rounds is how many random tools each SDK is given, each called with
// calls random arguments.
const rounds, calls = 40, 12

// Random schemas and random wrong arguments through a real go-sdk server
// and client, in memory, with toolmw's adapter: raw tools with the random
// schema (mcpsdk.AddTool validates), go-sdk's own typed tool (the SDK
// validates; the adapter rephrases) and toolctx's typed tool (the decoder):
// no answer names Go's internals.
func TestPropertyGoSDKFeedbackNamesNoGoInternals(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := gen{r: rand.New(rand.NewPCG(seed, 27))}
	srv := mcp.NewServer(&mcp.Implementation{Name: "property", Version: "1"}, nil)
	mcpsdk.Install(srv, nil)
	ok := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	schemas := map[string]map[string]any{}
	for i := range rounds {
		name := fmt.Sprintf("t%d", i)
		schemas[name] = g.tool()
		require.NoError(t, mcpsdk.AddTool(srv, &mcp.Tool{Name: name, InputSchema: schemas[name]}, ok), "%s: %v", name, schemas[name])
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "sdk_typed"}, func(context.Context, *mcp.CallToolRequest, typedArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	require.NoError(t, mcpsdk.AddTypedTool(srv, &mcp.Tool{Name: "toolmw_typed"}, func(context.Context, *toolctx.Request, typedArgs) (string, error) {
		return "ok", nil
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "property-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	typedSchema := map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "number"}, "n": map[string]any{"type": "integer"}, "s": map[string]any{"type": "string"},
		"l": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
		"o": map[string]any{"type": "object", "properties": map[string]any{"X": map[string]any{"type": "boolean"}}},
	}}
	var answers []answered
	call := func(tool, args string) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		a := answered{call: tool + " " + args}
		if err != nil {
			a.text = err.Error()
		} else {
			b, merr := json.Marshal(res)
			require.NoError(t, merr)
			a.text = string(b)
		}
		answers = append(answers, a)
	}
	for name, s := range schemas {
		for range calls {
			call(name, g.object(s, 2))
		}
	}
	for range rounds * calls / 4 {
		call("sdk_typed", g.object(typedSchema, 2))
		call("toolmw_typed", g.object(typedSchema, 2))
	}
	call("sdk_typed", `{"a":1,"n":null}`)
	call("toolmw_typed", `{"extra":1e999999}`)
	checkAnswers(t, "go-sdk", answers)
}

// The same through a real mcp-go server (with its input validation) and
// in-process client, with toolmw's adapter: raw tools with the random
// schema (mcp-go validates; the adapter rephrases) and mcpgo.TypedHandler
// (the decoder).
func TestPropertyMCPGoFeedbackNamesNoGoInternals(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	// mcp-go v1.2.1 decodes a tools/call request's arguments into float64s
	// before any hook or middleware runs, and answers a number out of
	// range with a JSON-RPC error of its own text ("unparsable tools/call
	// request: json: cannot unmarshal number 1e999999 into Go struct field
	// CallToolRequest.params of type float64"), which no adapter sees: an
	// open edge of mcp-go's, left out here and reported, not hidden.
	g := gen{r: rand.New(rand.NewPCG(seed, 27)), inRange: true}
	srv := gserver.NewMCPServer("property", "1", gserver.WithInputSchemaValidation(),
		mcpgo.ServerOption(func(h toolctx.Handler) toolctx.Handler { return h }))
	ok := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	schemas := map[string]map[string]any{}
	for i := range rounds {
		name := fmt.Sprintf("t%d", i)
		schemas[name] = g.tool()
		raw, err := json.Marshal(schemas[name])
		require.NoError(t, err)
		require.NoError(t, mcpgo.AddTool(srv, gmcp.NewToolWithRawSchema(name, "", raw), ok), "%s: %s", name, raw)
	}
	srv.AddTool(gmcp.NewTool("typed"), mcpgo.TypedHandler(func(context.Context, gmcp.CallToolRequest, typedArgs) (*gmcp.CallToolResult, error) {
		return gmcp.NewToolResultText("ok"), nil
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := gclient.NewInProcessClient(srv)
	require.NoError(t, err)
	require.NoError(t, c.Start(ctx))
	defer func() { _ = c.Close() }()
	init := gmcp.InitializeRequest{}
	init.Params.ClientInfo = gmcp.Implementation{Name: "property-client", Version: "1"}
	_, err = c.Initialize(ctx, init)
	require.NoError(t, err)

	typedSchema := map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "number"}, "n": map[string]any{"type": "integer"}, "s": map[string]any{"type": "string"},
		"l": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
	}}
	var answers []answered
	call := func(tool, args string) {
		req := gmcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = json.RawMessage(args)
		res, err := c.CallTool(ctx, req)
		a := answered{call: tool + " " + args}
		if err != nil {
			a.text = err.Error()
		} else {
			b, merr := json.Marshal(res)
			require.NoError(t, merr)
			a.text = string(b)
		}
		answers = append(answers, a)
	}
	for name, s := range schemas {
		for range calls {
			call(name, g.object(s, 2))
		}
	}
	for range rounds * calls / 4 {
		call("typed", g.object(typedSchema, 2))
	}
	call("typed", `{"a":1,"n":null}`)
	call("typed", `{"a":1,"n":300}`)
	checkAnswers(t, "mcp-go", answers)
}
