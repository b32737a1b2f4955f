package mcpgo_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// Install the chain first, so it is outermost; existing mcp-go handlers stay
// as they are. A raw error reaches the client as a generic isError result
// and the diagnostics hook as it is.
func ExampleServerOption() {
	chain := middleware.New(
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			fmt.Println("server keeps:", ev.Cause())
		}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	s := server.NewMCPServer("demo", "1.0.0", mcpgo.ServerOption(chain.Middleware()))
	s.AddTool(mcp.NewTool("lookup"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("dial tcp 10.0.0.7:5432: connection refused")
	})

	c, _ := client.NewInProcessClient(s)
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	_, _ = c.Initialize(ctx, mcp.InitializeRequest{})
	req := mcp.CallToolRequest{}
	req.Params.Name = "lookup"
	res, err := c.CallTool(ctx, req)
	fmt.Println("client sees:", err, res.IsError, res.Content[0].(mcp.TextContent).Text)
	fmt.Println("code:", res.Meta.AdditionalFields[toolctx.ErrorMetaKey])
	// Output:
	// server keeps: dial tcp 10.0.0.7:5432: connection refused
	// client sees: <nil> true internal error: the tool failed; the cause was recorded on the server
	// code: map[code:internal]
}

// AddTool registers a toolmw Handler, checking its name and schemas first.
func ExampleAddTool() {
	s := server.NewMCPServer("demo", "1.0.0")
	type in struct {
		Name string `json:"name"`
	}
	greet := toolctx.Typed(func(ctx context.Context, req *toolctx.Request, v in) (map[string]string, error) {
		if v.Name == "" {
			return nil, errs.InvalidArguments("name is required")
		}
		return map[string]string{"greeting": "hello " + v.Name}, nil
	})
	err := mcpgo.AddTool(s, mcp.NewTool("greet", mcp.WithString("name")), greet)
	fmt.Println(err)

	err = mcpgo.AddTool(s, mcp.NewTool("bad name!"), greet)
	var nameErr *errs.ToolNameError
	fmt.Println(errors.As(err, &nameErr))

	bad := mcp.NewToolWithRawSchema("raw", "", []byte(`{"type":"object","properties":{"n":{"type":"nope"}}}`))
	err = mcpgo.AddTool(s, bad, greet)
	var schemaErr *errs.ToolSchemaError
	fmt.Println(errors.As(err, &schemaErr), schemaErr.Schema)
	// Output:
	// <nil>
	// true
	// true input
}

// AddHooks runs the chain for the calls mcp-go rejects before any tool
// middleware, for a server that installs the middleware itself and sets its
// own hooks (ServerOption does both for you). The client's answers are
// mcp-go's own.
func ExampleAddHooks() {
	chain := middleware.New(middleware.After(func(ctx context.Context, info middleware.CallInfo) {
		fmt.Printf("after: tool=%s code=%s message=%q\n", info.Details.Tool(), info.Outcome.Public.Code, info.Outcome.Public.Message)
	}))
	hooks := &server.Hooks{}
	mcpgo.AddHooks(hooks, chain.Middleware())
	s := server.NewMCPServer("demo", "1.0.0",
		server.WithToolHandlerMiddleware(mcpgo.Middleware(chain.Middleware())),
		server.WithHooks(hooks),
		server.WithInputSchemaValidation(),
	)
	s.AddTool(mcp.NewTool("square", mcp.WithNumber("n", mcp.Required())), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})

	c, _ := client.NewInProcessClient(s)
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	_, _ = c.Initialize(ctx, mcp.InitializeRequest{})
	req := mcp.CallToolRequest{}
	req.Params.Name = "cube"
	_, err := c.CallTool(ctx, req)
	fmt.Println("client sees:", err)
	req.Params.Name = "square"
	req.Params.Arguments = map[string]any{"n": "two"}
	res, _ := c.CallTool(ctx, req)
	fmt.Println("client sees:", res.IsError, res.Content[0].(mcp.TextContent).Text)
	// Output:
	// after: tool=cube code=unknown_tool message="unknown tool \"cube\""
	// client sees: invalid params: tool 'cube' not found: tool not found
	// after: tool=square code=invalid_arguments message="invalid arguments: n: expected a number, got a string"
	// client sees: true invalid arguments: n: expected a number, got a string
}

// StructuredHandler registers an mcp-go typed handler whose errors reach the
// chain as errors: a public errs.Error keeps its message, a raw error is
// scrubbed (mcp.NewStructuredToolHandler would send "tool execution failed:
// " and the raw text).
func ExampleStructuredHandler() {
	chain := middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.Recover)
	s := server.NewMCPServer("demo", "1.0.0", mcpgo.ServerOption(chain.Middleware()))
	type in struct {
		ID int `json:"id"`
	}
	type out struct {
		Status string `json:"status"`
	}
	s.AddTool(mcp.NewTool("order", mcp.WithNumber("id")), mcpgo.StructuredHandler(
		func(ctx context.Context, req mcp.CallToolRequest, v in) (out, error) {
			switch v.ID {
			case 1:
				return out{Status: "shipped"}, nil
			case 2:
				return out{}, errs.NotFound("no such order")
			}
			return out{}, errors.New("pq: connection to 10.0.0.7 refused")
		}))

	c, _ := client.NewInProcessClient(s)
	defer c.Close()
	ctx := context.Background()
	_ = c.Start(ctx)
	_, _ = c.Initialize(ctx, mcp.InitializeRequest{})
	for id := 1; id <= 3; id++ {
		req := mcp.CallToolRequest{}
		req.Params.Name = "order"
		req.Params.Arguments = map[string]any{"id": id}
		res, _ := c.CallTool(ctx, req)
		fmt.Println(res.IsError, res.Content[0].(mcp.TextContent).Text)
	}
	// Output:
	// false {"status":"shipped"}
	// true no such order
	// true internal error: the tool failed; the cause was recorded on the server
}
