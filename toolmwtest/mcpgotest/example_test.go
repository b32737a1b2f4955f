package mcpgotest_test

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpgotest"
)

// Point the kit at an mcp-go server behind toolmw: 30 hostile failures
// (and the server's own tool) on the streamable HTTP transport. In a test,
// call mcpgotest.Run(t, cfg) instead: it fails the test with the report.
func Example() {
	chain := middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.Recover)
	res, err := mcpgotest.Check(context.Background(), mcpgotest.Config{
		NewServer: func() *server.MCPServer {
			return newServer(mcpgo.ServerOption(chain.Middleware()))
		},
		Plan: toolmwtest.Plan{Transports: []toolmwtest.Transport{toolmwtest.StreamableHTTP}, Count: 30},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res)
	// Output:
	// toolmwtest: 36 calls, nothing leaked
}
