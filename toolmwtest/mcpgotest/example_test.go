package mcpgotest_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpgotest"
)

// Check the behaviour table on an mcp-go server behind toolmw: one call
// per row (a raw error, a panic, an unencodable result, a public error, a
// handler's own isError result, invalid arguments), each checked on both
// sides: what the client received, and, through the kit's recorder wired
// into diagnostics and the audit log, what the server kept. (mcpsdktest's
// example runs the leak check instead; either kit runs both.)
func Example() {
	causes := new(toolmwtest.Causes)
	chain := middleware.New(
		audit.Interceptor(causes.Emitter(nil)),
		middleware.Diagnostics(causes.Diagnostics(nil)),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	quiet := mcpgo.WithFallbackLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	res, err := mcpgotest.Kit().CheckBehaviour(context.Background(), mcpgotest.BehaviourConfig{
		NewServer: func() *server.MCPServer { return newServer(mcpgo.ServerOption(chain.Middleware(), quiet)) },
		Causes:    causes,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res.Problems), "rows broken of", res.Calls, "calls")
	// Output:
	// 0 rows broken of 8 calls
}
