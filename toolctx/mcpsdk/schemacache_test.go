package mcpsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// TestSchemaCacheNeverStale: the adapter caches compiled input schemas, but
// a tool registered again with another schema (a typed tool; a raw tool
// whose *mcp.Tool is the same, with its schema changed) is judged by its
// new schema, never the cached one.
func TestSchemaCacheNeverStale(t *testing.T) {
	type inA struct {
		A int `json:"a" jsonschema:"a"`
	}
	type inB struct {
		B int `json:"b" jsonschema:"b"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	mcpsdk.Install(s, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "typed"}, func(ctx context.Context, req *mcp.CallToolRequest, in inA) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("unreachable")
	})
	raw := &mcp.Tool{Name: "raw", InputSchema: json.RawMessage(`{"type":"object","required":["a"]}`)}
	rawHandler := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := &mcp.CallToolResult{}
		res.SetError(errors.New("the handler refused its arguments"))
		return res, nil
	}
	s.AddTool(raw, rawHandler)
	cs := connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	feedback := func(tool string, args any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err, tool)
		require.True(t, res.IsError, tool)
		require.Equal(t, string(errs.CodeInvalidArguments), errorMeta(t, res)["code"], "%s: invalid arguments: %s", tool, text(res))
		return text(res)
	}
	for range 3 { // cached after the first
		require.Contains(t, feedback("typed", map[string]any{"a": "not a number"}), "a: expected an integer, got a string")
		require.Contains(t, feedback("raw", map[string]any{}), "a: required, but missing")
	}

	mcp.AddTool(s, &mcp.Tool{Name: "typed"}, func(ctx context.Context, req *mcp.CallToolRequest, in inB) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("unreachable")
	})
	raw.InputSchema = json.RawMessage(`{"type":"object","required":["b"]}`)
	s.AddTool(raw, rawHandler)
	require.Contains(t, feedback("typed", map[string]any{"b": "not a number"}), "b: expected", "the new typed tool's schema")
	require.Contains(t, feedback("raw", map[string]any{"a": 1}), "b: required, but missing", "the raw tool's changed schema")
}

// BenchmarkFailedTypedCall: a typed tool whose function returns an error
// (errors.New's type, the type the SDK's own validation error has), so that
// the adapter checks whether the arguments fail the tool's input schema:
// with the compiled-schema cache and without it, in one run.
//
//	go test ./toolctx/mcpsdk -run '^$' -bench FailedTypedCall -benchmem -count 5
func BenchmarkFailedTypedCall(b *testing.B) {
	type in struct {
		Name  string   `json:"name"`
		Count int      `json:"count,omitempty"`
		Tags  []string `json:"tags,omitempty"`
		Where struct {
			City string `json:"city"`
			Zip  string `json:"zip,omitempty"`
		} `json:"where"`
	}
	for _, bc := range []struct {
		name string
		mw   func(toolctx.Middleware, ...mcpsdk.Option) mcp.Middleware
	}{{"cached", mcpsdk.Middleware}, {"uncached", mcpsdk.MiddlewareWithoutSchemaCache}} {
		b.Run(bc.name, func(b *testing.B) {
			s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
			mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
				return nil, nil, errors.New("db: connection refused")
			})
			s.AddReceivingMiddleware(bc.mw(nil))
			st, ct := mcp.NewInMemoryTransports()
			ss, err := s.Connect(context.Background(), st, nil)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := newClient().Connect(context.Background(), ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = cs.Close(); _ = ss.Wait() }()
			params := &mcp.CallToolParams{Name: "fail", Arguments: json.RawMessage(`{"name":"x","where":{"city":"y"}}`)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || !res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkOriginCheck is the adapter alone (the SDK a stub) on a typed
// tool's failure whose error has errors.New's type: the origin check reads
// the tool table and validates the arguments against the tool's input
// schema, compiled once with the cache and on every call without it.
//
//	go test ./toolctx/mcpsdk -run '^$' -bench OriginCheck -benchmem -count 5
func BenchmarkOriginCheck(b *testing.B) {
	tool := &mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"count":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"}},"where":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"]}},"required":["name","where"]}`)}
	next := func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			return &mcp.ListToolsResult{Tools: []*mcp.Tool{tool}}, nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "db: connection refused"}}}
		res.SetError(errors.New("db: connection refused"))
		return res, nil
	}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "fail", Arguments: json.RawMessage(`{"name":"x","where":{"city":"y"}}`)}}
	for _, bc := range []struct {
		name string
		mw   func(toolctx.Middleware, ...mcpsdk.Option) mcp.Middleware
	}{{"cached", mcpsdk.Middleware}, {"uncached", mcpsdk.MiddlewareWithoutSchemaCache}} {
		b.Run(bc.name, func(b *testing.B) {
			h := bc.mw(nil)(next)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := h(ctx, "tools/call", req)
				if r, _ := res.(*mcp.CallToolResult); err != nil || r == nil || !r.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
