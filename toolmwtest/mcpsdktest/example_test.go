package mcpsdktest_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpsdktest"
)

// Point the kit at a go-sdk server behind toolmw: 30 hostile failures (and
// the server's own tool) on the in-memory transport. In a test, call
// mcpsdktest.Kit().Run(t, cfg) instead: it fails the test with the report.
func Example() {
	chain := middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.Recover)
	res, err := mcpsdktest.Kit().Check(context.Background(), mcpsdktest.Config{
		NewServer: func() *mcp.Server {
			s := bareServer()
			mcpsdk.Install(s, chain.Middleware())
			return s
		},
		Plan: toolmwtest.Plan{Transports: []toolmwtest.Transport{toolmwtest.InMemory}, Count: 30},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res)
	// Output:
	// toolmwtest: 36 calls, nothing leaked
}
