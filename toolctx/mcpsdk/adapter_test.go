package mcpsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// connect serves s in memory and returns a client session.
func connect(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	cs, err := newClient().Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

func TestAddToolRegistrationErrors(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	h := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	obj := json.RawMessage(`{"type":"object"}`)

	var nameErr *errs.ToolNameError
	require.ErrorAs(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "bad name!", InputSchema: obj}, h), &nameErr)
	require.ErrorAs(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "", InputSchema: obj}, h), &nameErr)

	var schemaErr *errs.ToolSchemaError
	err := mcpsdk.AddTool(s, &mcp.Tool{Name: "nil_schema"}, h)
	require.ErrorAs(t, err, &schemaErr)
	require.Equal(t, errs.SchemaInput, schemaErr.Schema)
	err = mcpsdk.AddTool(s, &mcp.Tool{Name: "not_object", InputSchema: json.RawMessage(`{"type":"string"}`)}, h)
	require.ErrorAs(t, err, &schemaErr)
	err = mcpsdk.AddTool(s, &mcp.Tool{Name: "bad_ref", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/nope"}}}`)}, h)
	require.ErrorAs(t, err, &schemaErr)
	err = mcpsdk.AddTool(s, &mcp.Tool{Name: "bad_out", InputSchema: obj, OutputSchema: json.RawMessage(`{"type":"object","minimum":"x"}`)}, h)
	require.ErrorAs(t, err, &schemaErr)
	require.Equal(t, errs.SchemaOutput, schemaErr.Schema)
	err = mcpsdk.AddTool(s, &mcp.Tool{Name: "bad_default", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":"x"}}}`)}, h)
	require.ErrorAs(t, err, &schemaErr)

	require.ErrorIs(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "ok", InputSchema: obj}, nil), toolctx.ErrNilHandler)
	require.ErrorIs(t, mcpsdk.AddTool(nil, &mcp.Tool{Name: "ok", InputSchema: obj}, h), mcpsdk.ErrNilTool)
	require.ErrorIs(t, mcpsdk.AddTypedTool[struct{}, any](s, &mcp.Tool{Name: "ok"}, nil), toolctx.ErrNilHandler)

	// A typed tool whose input type has no object schema.
	err = mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "chan_in"}, func(ctx context.Context, req *toolctx.Request, in chan int) (any, error) { return nil, nil })
	require.ErrorAs(t, err, &schemaErr)

	// None of the failed registrations reached the server.
	cs := connect(t, s)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, res.Tools)
}

func TestAddToolWithoutInstall(t *testing.T) {
	// A toolmw tool on a server without the adapter's middleware still
	// never leaks a raw error, and survives a panic.
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if strings.Contains(string(req.Arguments), "panic") {
				panic("secret " + canary)
			}
			return toolctx.ErrorResult(errors.New("secret " + canary))
		}), mcpsdk.WithFallbackLogger(logger), mcpsdk.WithTransport(toolctx.TransportInMemory)))
	cs := connect(t, s)
	for _, args := range []map[string]any{{}, {"panic": true}} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fail", Arguments: args})
		require.NoError(t, err)
		require.True(t, res.IsError)
		require.Equal(t, errs.GenericMessage, text(res))
		require.Equal(t, "internal", errorMeta(t, res)["code"])
	}
	require.Contains(t, logs.String(), canary) // the panic, server-side
}

func TestLastResortRecover(t *testing.T) {
	// A chain without Recover whose interceptor panics: the client gets the
	// generic message, the fallback logger the value and stack, and the
	// server keeps running.
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
	})
	boom := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if string(req.Arguments) == `{"boom":true}` {
				panic(errors.New("interceptor " + canary))
			}
			return next.CallTool(ctx, req)
		})
	}
	mcpsdk.Install(s, boom, mcpsdk.WithFallbackLogger(logger))
	cs := connect(t, s)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"boom": true}})
	require.NoError(t, err)
	require.Equal(t, errs.GenericMessage, text(res))
	require.Contains(t, logs.String(), canary)
	require.Contains(t, logs.String(), "goroutine")
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Equal(t, "fine", text(res))
}

func TestRequestFromSDK(t *testing.T) {
	// The _meta reaches the Request as sent, and hooks without the reserved
	// keys; an interceptor that changes the arguments changes what the tool
	// gets; the context's identity is used on a per-request context.
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	type in struct {
		N int `json:"n"`
	}
	var got *toolctx.Request
	mcp.AddTool(s, &mcp.Tool{Name: "double"}, func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, map[string]int, error) {
		return nil, map[string]int{"n": in.N * 2}, nil
	})
	rewrite := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			got = req
			r := *req
			r.Arguments = json.RawMessage(`{"n":5}`)
			return next.CallTool(ctx, &r)
		})
	}
	mcpsdk.Install(s, rewrite, mcpsdk.WithTransport(toolctx.TransportInMemory))
	st, ct := mcp.NewInMemoryTransports()
	sctx := toolctx.WithRequestID(toolctx.WithIdentity(context.Background(), toolctx.Identity{Subject: "alice", Scopes: []string{"read"}}), "rid-1")
	ss, err := s.Connect(sctx, st, nil)
	require.NoError(t, err)
	cs, err := newClient().Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "double", Arguments: map[string]any{"n": 1},
		Meta: mcp.Meta{"io.modelcontextprotocol/clientInfo": map[string]any{"name": "x"}, "trace": "t1"}})
	require.NoError(t, err)
	require.JSONEq(t, `{"n":10}`, jsonOf(t, res.StructuredContent))
	require.Equal(t, "double", got.Tool)
	require.Equal(t, "t1", got.Meta["trace"], "the handler's Request has the _meta as sent")
	require.Equal(t, map[string]any{"name": "x"}, got.Meta["io.modelcontextprotocol/clientInfo"], "the protocol's keys included")
	require.Equal(t, map[string]any{"trace": "t1"}, toolctx.DetailsOf(got).Meta(), "hooks see the client's own keys only")
	require.Equal(t, toolctx.TransportInMemory, got.Transport)
	require.Equal(t, "alice", got.Identity.Subject)
	require.Equal(t, "rid-1", got.RequestID)
	require.NotEmpty(t, got.CallID)
}

func TestAddTypedToolValidates(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	type in struct {
		N    int    `json:"n"`
		Unit string `json:"unit,omitempty"`
	}
	type out struct {
		Total int `json:"total"`
	}
	inSchema, err := jsonschema.For[in](nil)
	require.NoError(t, err)
	inSchema.Properties["unit"].Default = json.RawMessage(`"kg"`)
	require.NoError(t, mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "sum", InputSchema: inSchema}, func(ctx context.Context, req *toolctx.Request, in in) (out, error) {
		if in.Unit != "kg" {
			return out{}, errs.InvalidArguments("unit must be kg")
		}
		return out{Total: in.N}, nil
	}))
	// A toolmw tool whose output breaks its declared schema.
	require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "bad_out", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["total"]}`)},
		toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			return toolctx.StructuredResult(map[string]string{"secret": canary})
		})))
	mcpsdk.Install(s, nil)
	cs := connect(t, s)

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sum", Arguments: map[string]any{"n": 3}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	require.JSONEq(t, `{"total":3}`, jsonOf(t, res.StructuredContent))

	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sum", Arguments: map[string]any{"n": "x"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, "invalid_arguments", errorMeta(t, res)["code"])
	require.Contains(t, text(res), "invalid arguments")

	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bad_out", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Equal(t, errs.GenericMessage, text(res))
	require.NotContains(t, jsonOf(t, res), canary)
}

// TestTerminalRunTwice: an interceptor may run the rest of the chain more
// than once (a retry, or two runs at once as a hedge). The client gets the
// result of the run whose result the interceptor returns, the SDK's result
// passes through losslessly, and the race detector sees no shared state.
func TestTerminalRunTwice(t *testing.T) {
	var n atomic.Int32
	newServer := func(m toolctx.Middleware) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "count"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, struct{ N int32 }, error) {
			k := n.Add(1)
			if k%2 == 1 {
				return nil, struct{ N int32 }{}, errors.New("odd run " + canary)
			}
			return &mcp.CallToolResult{Meta: mcp.Meta{"run": k}}, struct{ N int32 }{N: k}, nil
		})
		mcpsdk.Install(s, m)
		return s
	}
	retry := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if res := next.CallTool(ctx, req); !res.IsError {
				return res
			}
			return next.CallTool(ctx, req)
		})
	}
	hedge := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			results := make(chan *toolctx.CallResult, 2)
			for range 2 {
				go func() { results <- next.CallTool(ctx, req) }()
			}
			a, b := <-results, <-results
			if a.IsError {
				return b
			}
			return a
		})
	}
	for name, m := range map[string]toolctx.Middleware{"retry": retry, "hedge": hedge} {
		t.Run(name, func(t *testing.T) {
			n.Store(0)
			cs := connect(t, newServer(m))
			for range 20 {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "count", Arguments: map[string]any{}})
				require.NoError(t, err)
				require.False(t, res.IsError, "one of the two runs succeeds: %+v", res.Content)
				out, _ := json.Marshal(res)
				require.NotContains(t, string(out), canary, "the failed run's raw error stays off the wire")
				got, ok := res.StructuredContent.(map[string]any)
				require.True(t, ok, "structured content passes through: %s", out)
				require.EqualValues(t, got["N"], res.Meta["run"], "content and _meta come from the same (successful) run: %s", out)
				require.Zero(t, int(got["N"].(float64))%2, "the successful run is an even one: %s", out)
			}
		})
	}
}

// WithNormalizer is the adapter's knob by the same name as mcp-go's: a
// failure that reaches the adapter unnormalized is normalized with it, on
// a server with the adapter's middleware and on one without.
func TestWithNormalizer(t *testing.T) {
	errNoRows := errors.New("sql: no rows in result set")
	n := errs.Normalizer{Map: func(err error) *errs.Error {
		if errors.Is(err, errNoRows) {
			return errs.NotFound("no such invoice")
		}
		return nil
	}, GenericMessage: "it broke"}
	h := toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		if strings.Contains(string(req.Arguments), "raw") {
			return toolctx.ErrorResult(errors.New("secret " + canary))
		}
		return toolctx.ErrorResult(errNoRows)
	})
	tool := &mcp.Tool{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`)}
	for _, installed := range []bool{true, false} {
		s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
		if installed {
			mcpsdk.Install(s, func(next toolctx.Handler) toolctx.Handler { return next }, mcpsdk.WithNormalizer(n))
		}
		require.NoError(t, mcpsdk.AddTool(s, tool, h, mcpsdk.WithNormalizer(n)))
		cs := connect(t, s)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{}})
		require.NoError(t, err, "installed %v", installed)
		require.True(t, res.IsError, "installed %v: a failure", installed)
		require.Equal(t, "no such invoice", text(res), "installed %v: the user's mapping applies", installed)
		require.Equal(t, "not_found", errorMeta(t, res)["code"], "installed %v: with its code", installed)
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{"raw": true}})
		require.NoError(t, err, "installed %v", installed)
		require.Equal(t, "it broke", text(res), "installed %v: and its generic message", installed)
	}
}
