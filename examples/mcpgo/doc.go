// Command mcpgo serves the same toolkit on github.com/mark3labs/mcp-go: one
// chain (audit, diagnostics, normalize, recover, a per-tool timeout) installed
// with mcpgo.ServerOption, around a toolmw handler registered with
// mcpgo.AddTool and existing mcp-go handlers registered natively. It serves
// them over streamable HTTP (the default), SSE or stdio, and its -client
// mode calls every tool with mcp-go's own client and prints what it saw.
//
//	go run ./examples/mcpgo                                      # streamable HTTP on 127.0.0.1:8081/mcp
//	go run ./examples/mcpgo -client http://127.0.0.1:8081/mcp    # mcp-go's client calls every tool
//	go run ./examples/mcpgo -sse                                 # SSE on 127.0.0.1:8081/sse
//	go run ./examples/mcpgo -sse -client http://127.0.0.1:8081/sse
//	go run ./examples/mcpgo -stdio                               # stdio; logs go to stderr
//	go run ./examples/mcpgo -tour                                # server and client in one process
//
// The audit rows and diagnostics go to stderr (with -tour, to stdout).
package main
