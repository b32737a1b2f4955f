package mcpsdk_test

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577), still served: the example shows toolctx.Log through it.

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// A toolmw handler reports progress and logs to the go-sdk client that
// called it, with toolctx.Progress and toolctx.Log: the adapter sends them
// over the call's session, on whatever transport it is. Progress goes only
// to a call that gave a progress token, a log only at or above the level
// the client asked for.
func Example_progress() {
	server := mcp.NewServer(&mcp.Implementation{Name: "exports"}, nil)
	export := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		for i := 1; i <= 3; i++ {
			_ = toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i), Total: 3, Message: fmt.Sprintf("row %d of 3", i)})
		}
		_ = toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogDebug, Data: "below the client's level: not sent"})
		_ = toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogNotice, Logger: "export", Data: "3 rows exported"})
		return toolctx.TextResult("exported")
	})
	_ = mcpsdk.AddTool(server, &mcp.Tool{Name: "export", InputSchema: map[string]any{"type": "object"}}, export)
	mcpsdk.Install(server, middleware.New(middleware.Recover).Middleware())

	heard := make(chan string, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "client"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			heard <- fmt.Sprintf("progress %v/%v %q", r.Params.Progress, r.Params.Total, r.Params.Message)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			heard <- fmt.Sprintf("log %s %s: %v", r.Params.Level, r.Params.Logger, r.Params.Data)
		},
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, _ := server.Connect(context.Background(), st, nil)
	cs, _ := client.Connect(context.Background(), ct, nil)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "export",
		// A progress token, and (protocol 2026-07-28) the log level of this call.
		Meta: mcp.Meta{"progressToken": "export-1", mcp.MetaKeyLogLevel: "info"}})
	for range 4 {
		select {
		case h := <-heard:
			fmt.Println(h)
		case <-time.After(10 * time.Second):
			fmt.Println("missing a notification")
		}
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// progress 1/3 "row 1 of 3"
	// progress 2/3 "row 2 of 3"
	// progress 3/3 "row 3 of 3"
	// log notice export: 3 rows exported
	// exported
}
