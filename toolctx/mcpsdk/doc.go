// Package mcpsdk runs a toolmw chain on the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk), so that no raw error, panic
// value or stack reaches a client while the chain's hooks keep the cause;
// docs/adapters/mcpsdk.md holds the SDK facts it relies on.
//
// [Install] wraps an existing server, whatever registered its tools;
// [AddTool] and [AddTypedTool] register toolmw handlers next to the SDK's,
// with errors instead of panics:
//
//	mcpsdk.Install(server, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportStdio))
//	if err := mcpsdk.AddTool(server, &mcp.Tool{Name: "lookup", InputSchema: schema}, h); err != nil {
//		log.Fatal(err) // *errs.ToolNameError or *errs.ToolSchemaError
//	}
//
// The client gets the public envelope only: the public message as text
// and {"code", "detail"} under _meta["io.github.toolmw/error"]. A success
// goes out as the SDK produced it unless an interceptor replaced it. The
// chain runs for unknown tools too; only the SDK's own refusals before a
// handler (an unknown tool, a typed tool's invalid arguments) and a
// handler's URL elicitation reach the client as protocol answers.
package mcpsdk
