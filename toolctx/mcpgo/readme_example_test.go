package mcpgo_test

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// A whole mcp-go server behind the core chain, over stdio: the README shows
// this function's body. The native handler stays as it is; its raw error
// reaches the audit row and the diagnostics log, and the client gets the
// generic internal failure instead of mcp-go's -32603 with the error's text.
func Example_chain() {
	rows := audit.Direct(audit.NewSlogSink(slog.NewJSONHandler(os.Stderr, nil)), audit.DirectConfig{})
	chain := middleware.New(
		audit.Interceptor(rows), // outermost: one row per call, with the raw cause
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			slog.ErrorContext(ctx, "tool call failed", "err", errs.Describe(ev.Cause()))
		}),
		middleware.Normalize(errs.Normalizer{}), // a raw error becomes the generic public failure
		middleware.Recover,                      // a panic becomes a failure, even its value withheld
	)

	s := server.NewMCPServer("reports", "1.0.0",
		mcpgo.ServerOption(chain.Middleware()), // first, so that it is the outermost tool middleware
		server.WithInputSchemaValidation(),
	)
	s.AddTool(mcp.NewTool("sales_report", mcp.WithString("region")), // a native handler, unchanged
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("dial postgres://app:hunter2@db:5432/sales: connection refused")
		})
	if err := server.ServeStdio(s); err != nil {
		log.Fatal(err)
	}
}
