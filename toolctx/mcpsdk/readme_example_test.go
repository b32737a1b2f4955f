package mcpsdk_test

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// A whole go-sdk server behind the core chain, over stdio: the README shows
// this function's body. The client of sales_report gets the generic internal
// failure; the audit row and the diagnostics log on stderr get the
// connection string.
func Example_chain() {
	rows := audit.Direct(audit.NewSlogSink(slog.NewJSONHandler(os.Stderr, nil)), audit.DirectConfig{})
	chain := middleware.New(
		audit.Interceptor(rows), // outermost: one row per call, with the raw cause
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			slog.ErrorContext(ctx, "tool call failed", "err", errs.Describe(ev.Cause()))
		}),
		middleware.Normalize(errs.Normalizer{}), // a raw error becomes the generic public failure
		middleware.Recover,                      // a panic becomes a failure; the server lives on
	)

	type region struct {
		Region string `json:"region"`
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "reports"}, nil)
	err := mcpsdk.AddTypedTool(server, &mcp.Tool{Name: "sales_report"},
		func(ctx context.Context, req *toolctx.Request, in region) (map[string]int, error) {
			return nil, errors.New("dial postgres://app:hunter2@db:5432/sales: connection refused")
		})
	if err != nil {
		log.Fatal(err) // a bad tool name or schema: an error here, not a panic
	}
	mcpsdk.Install(server, chain.Middleware()) // native mcp.AddTool tools are wrapped too
	// GuardTransport: a message go-sdk cannot decode is answered with a
	// fixed error, not the decoder's text.
	if err := server.Run(context.Background(), mcpsdk.GuardTransport(&mcp.StdioTransport{})); err != nil {
		log.Fatal(err)
	}
}
