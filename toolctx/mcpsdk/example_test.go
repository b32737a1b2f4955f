package mcpsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// Wrap an existing go-sdk server, with its tools as they are, in a toolmw
// chain. The typed handler's raw error never reaches the client; the
// diagnostics hook gets it.
func ExampleInstall() {
	type in struct {
		ID string `json:"id"`
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "invoices"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "get_invoice"}, func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("dial tcp 10.0.0.7:5432: connection refused")
	})

	chain := middleware.New(
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			fmt.Println("diagnostics:", ev.Details.Tool(), ev.Cause())
		}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	mcpsdk.Install(server, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportInMemory))

	st, ct := mcp.NewInMemoryTransports()
	ss, _ := server.Connect(context.Background(), st, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil)
	cs, _ := client.Connect(context.Background(), ct, nil)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_invoice", Arguments: map[string]any{"id": "7"}})
	fmt.Println("client:", res.IsError, res.Content[0].(*mcp.TextContent).Text)
	fmt.Println("code:", res.Meta[toolctx.ErrorMetaKey].(map[string]any)["code"])
	// Output:
	// diagnostics: get_invoice dial tcp 10.0.0.7:5432: connection refused
	// client: true internal error: the tool failed; the cause was recorded on the server
	// code: internal
}

// Register a toolmw handler: bad names and schemas are errors, not panics,
// and an explicit public error reaches the client with its detail.
func ExampleAddTool() {
	server := mcp.NewServer(&mcp.Implementation{Name: "invoices"}, nil)
	lookup := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(errs.NotFound("no such invoice").
			WithDetail(map[string]any{"id": "7"}).
			WithCause(errors.New("sql: no rows in result set")))
	})
	schema := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)

	err := mcpsdk.AddTool(server, &mcp.Tool{Name: "lookup invoice", InputSchema: schema}, lookup)
	fmt.Println(err)
	err = mcpsdk.AddTool(server, &mcp.Tool{Name: "lookup_invoice", InputSchema: schema}, lookup)
	fmt.Println(err)
	mcpsdk.Install(server, middleware.New(middleware.Recover).Middleware())

	st, ct := mcp.NewInMemoryTransports()
	ss, _ := server.Connect(context.Background(), st, nil)
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(context.Background(), ct, nil)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_invoice", Arguments: map[string]any{"id": "7"}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, res.Meta[toolctx.ErrorMetaKey])
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_invoice", Arguments: map[string]any{}})
	fmt.Println(res.Meta[toolctx.ErrorMetaKey].(map[string]any)["code"])
	// Output:
	// invalid tool name "lookup invoice": byte 6 (' ') is not one of A-Z a-z 0-9 _ - .
	// <nil>
	// no such invoice map[code:not_found detail:map[id:7]]
	// invalid_arguments
}

// Register a typed function; its schemas are inferred from the types.
func ExampleAddTypedTool() {
	type in struct {
		A, B int
	}
	type out struct {
		Sum int `json:"sum"`
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "calc"}, nil)
	err := mcpsdk.AddTypedTool(server, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *toolctx.Request, in in) (out, error) {
		return out{Sum: in.A + in.B}, nil
	})
	fmt.Println(err)
	mcpsdk.Install(server, nil)

	st, ct := mcp.NewInMemoryTransports()
	ss, _ := server.Connect(context.Background(), st, nil)
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(context.Background(), ct, nil)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"A": 2, "B": 3}})
	b, _ := json.Marshal(res.StructuredContent)
	fmt.Println(string(b))
	// Output:
	// <nil>
	// {"sum":5}
}

// Serve a server over the SDK's SSE transport with SSE in front of its
// handler: every call's Request names the transport and the session.
func ExampleSSE() {
	server := mcp.NewServer(&mcp.Implementation{Name: "whoami"}, nil)
	mcpsdk.Install(server, middleware.New(middleware.Recover).Middleware())
	_ = mcpsdk.AddTool(server, &mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			return toolctx.TextResult(fmt.Sprintf("%s, session id set: %v", req.Transport, req.SessionID != ""))
		}))

	srv := httptest.NewServer(mcpsdk.SSE(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	defer srv.Close()
	defer srv.CloseClientConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: sse, session id set: true
}
