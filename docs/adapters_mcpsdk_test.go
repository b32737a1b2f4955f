package docs_test

import (
	"context"
	"encoding/json"
	"log"
	"net/http"

	"github.com/justinas/alice"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// The blocks of docs/adapters/mcpsdk.md.

type searchIn struct {
	Query string `json:"query"`
}

func search(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Query}}}, nil, nil
}

func Example_adapterMCPSDK() {
	var (
		auditHook middleware.AfterFunc
		report    middleware.DiagnosticsFunc
		schema    = json.RawMessage(`{"type":"object"}`)
		h         = toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			return toolctx.TextResult("ok")
		})
	)
	// doc:begin adapters-mcpsdk
	chain := middleware.New(
		middleware.After(auditHook),
		middleware.Diagnostics(report),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	server := mcp.NewServer(&mcp.Implementation{Name: "demo"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "search"}, search) // unchanged
	mcpsdk.Install(server, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportStdio))

	// toolmw handlers next to the SDK's, with errors instead of panics:
	if err := mcpsdk.AddTool(server, &mcp.Tool{Name: "lookup", InputSchema: schema}, h); err != nil {
		log.Fatal(err) // *errs.ToolNameError or *errs.ToolSchemaError
	}
	// doc:end adapters-mcpsdk
}

func Example_adapterMCPSDKHTTP() {
	var (
		server                         *mcp.Server
		recoverMW, requestIDMW, authMW alice.Constructor
		getServer                      = func(*http.Request) *mcp.Server { return server }
	)
	// doc:begin adapters-mcpsdk-identity
	alice.New(recoverMW, requestIDMW, authMW, mcpsdk.ForwardIdentity).
		Then(mcp.NewStreamableHTTPHandler(getServer, nil))
	// doc:end adapters-mcpsdk-identity
	// doc:begin adapters-mcpsdk-sse
	http.Handle("/sse", mcpsdk.SSE(mcp.NewSSEHandler(getServer, nil)))
	// doc:end adapters-mcpsdk-sse
}

func Example_adapterMCPSDKFrames() {
	var (
		server    *mcp.Server
		ctx       = context.Background()
		getServer = func(*http.Request) *mcp.Server { return server }
	)
	// doc:begin adapters-mcpsdk-frames
	// stdio (and any mcp.IOTransport, mcp.InMemoryTransport, or any other transport):
	if err := server.Run(ctx, mcpsdk.GuardTransport(&mcp.StdioTransport{})); err != nil {
		log.Fatal(err)
	}
	// streamable HTTP and SSE: the check in front of the SDK's handlers.
	frames := httpmw.CheckFrames(mcpsdk.NewFrameGuard())
	http.Handle("/mcp", frames(mcp.NewStreamableHTTPHandler(getServer, nil)))
	http.Handle("/sse", frames(mcpsdk.SSE(mcp.NewSSEHandler(getServer, nil))))
	// doc:end adapters-mcpsdk-frames
}
