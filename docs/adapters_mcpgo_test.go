package docs_test

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// The blocks of docs/adapters/mcpgo.md.

func Example_adapterMCPGo() {
	var (
		auditFn       middleware.AfterFunc
		diagFn        middleware.DiagnosticsFunc
		nativeTool    = mcp.NewTool("native")
		nativeHandler = func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		}
		tool          = mcp.NewTool("toolmw")
		toolmwHandler = toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			return toolctx.TextResult("ok")
		})
	)
	// doc:begin adapters-mcpgo
	chain := middleware.New(
		middleware.After(auditFn),
		middleware.Diagnostics(diagFn),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	s := server.NewMCPServer("demo", "1.0.0",
		mcpgo.ServerOption(chain.Middleware()), // first: outermost
		server.WithInputSchemaValidation(),
	)
	s.AddTool(nativeTool, nativeHandler)         // unchanged mcp-go handler
	err := mcpgo.AddTool(s, tool, toolmwHandler) // checked at registration
	// doc:end adapters-mcpgo
	_ = err
}

func Example_adapterMCPGoHooks() {
	chain := middleware.New(middleware.Recover)
	// doc:begin adapters-mcpgo-hooks
	hooks := &server.Hooks{}
	mcpgo.AddHooks(hooks, chain.Middleware())
	s := server.NewMCPServer("demo", "1.0.0",
		server.WithToolHandlerMiddleware(mcpgo.Middleware(chain.Middleware())),
		server.WithHooks(hooks),
		server.WithInputSchemaValidation(),
	)
	// doc:end adapters-mcpgo-hooks
	_ = s
}
