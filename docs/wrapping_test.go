package docs_test

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

type forecastIn struct {
	City string `json:"city"`
}

// NewExistingServer stands for a go-sdk server written without toolmw.
func NewExistingServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *mcp.CallToolRequest, in forecastIn) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("GET https://api.weather.example/v3?key=wx-live-7f3a9c: 502 Bad Gateway")
	})
	return s
}

// One call wraps an existing go-sdk server (docs/wrapping.md).
func Example_wrapGoSDK() {
	chain := middleware.New(middleware.Recover)
	// doc:begin wrapsdk
	server := NewExistingServer() // mcp.AddTool(server, &mcp.Tool{Name: "forecast"}, forecast), unchanged
	mcpsdk.Install(server, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportStdio))
	// doc:end wrapsdk
}
