// Command mcpgo runs the same toolkit on github.com/mark3labs/mcp-go: one
// chain (audit, diagnostics, normalize, recover, a per-tool timeout) installed
// with mcpgo.ServerOption, around a toolmw handler registered with
// mcpgo.AddTool and an existing mcp-go handler registered natively. It calls
// them with mcp-go's in-process client and prints what the client saw.
//
//	go run ./examples/mcpgo
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo:", err)
		os.Exit(1)
	}
}

// FakeDSN is in the native handler's raw error: never sent to the client.
const FakeDSN = "postgres://reporting:hunter2@db-7.internal.example:5432/sales"

type orderIn struct {
	ID int `json:"id"`
}

type orderOut struct {
	ID     int    `json:"id"`
	Status string `json:"status"`
}

func lookupOrder(ctx context.Context, req *toolctx.Request, in orderIn) (orderOut, error) {
	switch in.ID {
	case 1:
		return orderOut{ID: 1, Status: "shipped"}, nil
	case 13:
		panic("order 13 is cursed")
	}
	return orderOut{}, errs.NotFound(fmt.Sprintf("order %d does not exist", in.ID)).
		WithDetail(map[string]any{"id": in.ID})
}

// salesReport is an existing mcp-go handler, registered natively.
func salesReport(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("dial %s: connection refused", FakeDSN)
}

func slowTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	select {
	case <-time.After(5 * time.Second):
		return mcp.NewToolResultText("done"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// NewServer builds the mcp-go server with the chain installed first, so that
// it is the outermost tool middleware.
func NewServer(rows audit.Emitter, diag middleware.DiagnosticsFunc) (*server.MCPServer, error) {
	chain := middleware.New(
		audit.Interceptor(rows),
		middleware.Diagnostics(diag),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.When(middleware.Tools("slow"), middleware.Timeout(100*time.Millisecond)),
	)
	s := server.NewMCPServer("toolmw-mcpgo-demo", "0.1.0",
		mcpgo.ServerOption(chain.Middleware()),
		server.WithInputSchemaValidation(),
	)
	// Native mcp-go handlers, unchanged.
	s.AddTool(mcp.NewTool("sales_report", mcp.WithString("region")), salesReport)
	s.AddTool(mcp.NewTool("slow"), slowTool)
	// A toolmw typed handler, checked at registration.
	err := mcpgo.AddTool(s, mcp.NewTool("lookup_order",
		mcp.WithDescription("Looks up an order; only order 1 exists."),
		mcp.WithNumber("id", mcp.Required())), toolctx.Typed(lookupOrder))
	return s, err
}

func run(ctx context.Context, out io.Writer) error {
	s, err := NewServer(
		audit.EmitterFunc(func(ctx context.Context, r audit.Record) {
			fmt.Fprintf(out, "   audit row: outcome=%s code=%s message=%q\n", r.Outcome, r.Code, r.Message)
		}),
		func(ctx context.Context, ev middleware.DiagnosticEvent) {
			fmt.Fprintf(out, "   diagnostics: %v\n", ev.Cause())
		})
	if err != nil {
		return err
	}
	c, err := client.NewInProcessClient(s)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	if err := c.Start(ctx); err != nil {
		return err
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		return err
	}

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"lookup_order", map[string]any{"id": 1}},
		{"lookup_order", map[string]any{"id": 42}},
		{"lookup_order", map[string]any{"id": "one"}},
		{"lookup_order", map[string]any{"id": 13}},
		{"sales_report", map[string]any{"region": "emea"}},
		{"slow", map[string]any{}},
		{"no_such_tool", map[string]any{}},
	}
	for _, cl := range calls {
		b, _ := json.Marshal(cl.args)
		fmt.Fprintf(out, "%s %s\n", cl.tool, b)
		req := mcp.CallToolRequest{}
		req.Params.Name = cl.tool
		req.Params.Arguments = cl.args
		res, err := c.CallTool(ctx, req)
		fmt.Fprintf(out, "   client got: %s\n", describe(res, err))
	}
	return nil
}

func describe(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "protocol error: " + err.Error()
	}
	var text string
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(mcp.TextContent); ok {
			text = t.Text
		}
	}
	if !res.IsError {
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			return "ok " + string(b)
		}
		return fmt.Sprintf("ok %q", text)
	}
	s := fmt.Sprintf("isError %q", text)
	if res.Meta != nil {
		if m, ok := res.Meta.AdditionalFields[toolctx.ErrorMetaKey]; ok {
			b, _ := json.Marshal(m)
			s += " " + string(b)
		}
	}
	return s
}
