package docs_test

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

type orderIn struct {
	ID int `json:"id"`
}

type orderOut struct {
	ID     int    `json:"id"`
	Status string `json:"status"`
}

func lookupOrder(ctx context.Context, req *toolctx.Request, in orderIn) (orderOut, error) {
	return orderOut{ID: in.ID, Status: "shipped"}, nil
}

func salesReport(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, errors.New("dial postgres://reporting:hunter2@db-7.internal.example:5432/sales: connection refused")
}

func exportHandler(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
	return &mcp.CreateTaskResult{}, nil
}

// The chain on an mcp-go server, native handlers included (docs/wrapping.md).
func Example_wrapMCPGo() {
	chain := middleware.New(middleware.Recover)
	run := func() error {
		// doc:begin wrapmcpgo
		s := server.NewMCPServer("demo", "1.0.0",
			mcpgo.ServerOption(chain.Middleware()),
			server.WithInputSchemaValidation(),
		)
		s.AddTool(mcp.NewTool("sales_report", mcp.WithString("region")), salesReport) // native, unchanged
		err := mcpgo.AddTool(s, mcp.NewTool("lookup_order", mcp.WithNumber("id", mcp.Required())),
			toolctx.Typed(lookupOrder))
		// doc:end wrapmcpgo
		if err != nil {
			return err
		}
		// doc:begin tasktool
		err = mcpgo.AddTaskTool(s, mcp.NewTool("export", mcp.WithTaskSupport(mcp.TaskSupportRequired)),
			chain.Middleware(), exportHandler) // a server.TaskToolHandlerFunc
		// doc:end tasktool
		return err
	}
	_ = run
}
