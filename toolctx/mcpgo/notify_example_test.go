package mcpgo_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// A toolmw handler reports progress and logs to the mcp-go client that
// called it, with toolctx.Progress and toolctx.Log: the adapter sends them
// to the call's session, on whatever transport it is. Progress goes only to
// a call that gave a progress token, a log only at or above the level the
// client set (server.WithLogging lets it).
func Example_progress() {
	s := server.NewMCPServer("exports", "1.0.0", mcpgo.ServerOption(middleware.New(middleware.Recover).Middleware()), server.WithLogging())
	_ = mcpgo.AddTool(s, mcp.NewTool("export"), toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		for i := 1; i <= 3; i++ {
			_ = toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i), Total: 3, Message: fmt.Sprintf("row %d of 3", i)})
		}
		_ = toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogInfo, Data: "below the client's level: not sent"})
		_ = toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogError, Logger: "export", Data: "row 2 was empty"})
		return toolctx.TextResult("exported")
	}))

	c, _ := client.NewInProcessClient(s)
	defer c.Close()
	heard := make(chan string, 8)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		p := n.Params.AdditionalFields
		switch n.Method {
		case string(mcp.MethodNotificationProgress):
			heard <- fmt.Sprintf("progress %v/%v %q", p["progress"], p["total"], p["message"])
		case string(mcp.MethodNotificationMessage):
			heard <- fmt.Sprintf("log %v %v: %v", p["level"], p["logger"], p["data"])
		}
	})
	ctx := context.Background()
	_ = c.Start(ctx)
	_, _ = c.Initialize(ctx, mcp.InitializeRequest{})
	level := mcp.SetLevelRequest{}
	level.Params.Level = mcp.LoggingLevelWarning
	_ = c.SetLevel(ctx, level) //lint:ignore SA1019 logging is deprecated in protocol 2026-07-28, still served
	req := mcp.CallToolRequest{}
	req.Params.Name = "export"
	req.Params.Meta = &mcp.Meta{ProgressToken: "export-1"}
	res, _ := c.CallTool(ctx, req)
	for range 4 {
		select {
		case h := <-heard:
			fmt.Println(h)
		case <-time.After(10 * time.Second):
			fmt.Println("missing a notification")
		}
	}
	fmt.Println(res.Content[0].(mcp.TextContent).Text)
	// Output:
	// progress 1/3 "row 1 of 3"
	// progress 2/3 "row 2 of 3"
	// progress 3/3 "row 3 of 3"
	// log error export: row 2 was empty
	// exported
}
