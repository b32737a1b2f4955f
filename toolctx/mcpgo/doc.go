// Package mcpgo runs a toolmw chain on github.com/mark3labs/mcp-go (v1.2),
// so that no raw error, panic value or stack reaches a client while the
// chain's hooks keep the cause; docs/adapters/mcpgo.md holds the mcp-go
// facts it relies on.
//
// [ServerOption] installs the chain around every tool call (give it first:
// outermost), with hooks that run the chain for the calls mcp-go rejects
// before any tool middleware; [AddTool] and [AddTaskTool] register toolmw
// handlers and task tools, checked at registration:
//
//	s := server.NewMCPServer("demo", "1.0.0",
//		mcpgo.ServerOption(chain.Middleware()),
//		server.WithInputSchemaValidation(),
//	)
//	err := mcpgo.AddTool(s, tool, toolmwHandler)
//
// The client gets the public envelope only: the public message as text
// and {"code", "detail"} under _meta["io.github.toolmw/error"], never
// mcp-go's -32603 error text. A success goes out as the handler returned
// it unless an interceptor replaced it. Register typed handlers with
// [TypedHandler] or [StructuredHandler], so that their errors reach the
// chain as errors.
package mcpgo
