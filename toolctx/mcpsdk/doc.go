// Package mcpsdk runs toolmw on the official MCP Go SDK,
// github.com/modelcontextprotocol/go-sdk.
//
// Wrap an existing server, whatever registered its tools:
//
//	chain := middleware.New(
//		middleware.After(auditHook),
//		middleware.Diagnostics(report),
//		middleware.Normalize(errs.Normalizer{}),
//		middleware.Recover,
//	)
//	server := mcp.NewServer(&mcp.Implementation{Name: "demo"}, nil)
//	mcp.AddTool(server, &mcp.Tool{Name: "search"}, search) // unchanged
//	mcpsdk.Install(server, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportStdio))
//
// and register toolmw handlers next to the SDK's, with errors instead of
// panics:
//
//	if err := mcpsdk.AddTool(server, &mcp.Tool{Name: "lookup", InputSchema: schema}, h); err != nil {
//		log.Fatal(err) // *errs.ToolNameError or *errs.ToolSchemaError
//	}
//
// # What the client sees
//
// The SDK copies a typed handler's err.Error() into the result it sends,
// sends a raw handler's error (and an output-schema failure) as a JSON-RPC
// error with code 0 and the raw text, and does not recover panics. Under
// [Middleware] none of that reaches the client: every failure becomes a
// [*toolctx.CallResult] whose raw cause stays on the server (for the chain's
// diagnostics and audit hooks), and the client gets the public envelope only
// — the public message as text content and {"code", "detail"} under
// _meta["toolmw/error"]. Successful results are sent exactly as the SDK
// produced them unless an interceptor replaced them.
//
// # The request
//
// [toolctx.Request] is filled from what the SDK exposes: the tool name and
// raw arguments; a generated CallID (the SDK does not expose the JSON-RPC
// id); the session id (empty except on stateful streamable HTTP); the
// client's _meta as sent (untrusted; hooks and audit rows see it without
// the io.modelcontextprotocol/ keys, through toolctx.Details.Meta); on
// streamable HTTP the request header and, from the SDK's auth.TokenInfo, the
// identity (UserID as subject, and scopes; never the token). An identity or
// request id that an HTTP layer put in the context ([toolctx.WithIdentity],
// [toolctx.WithRequestID]) is used where the context belongs to the request:
// on stdio, in-memory and stateless streamable HTTP, but not on stateful
// streamable HTTP, where the SDK's context is that of the request that
// created the session: wrap the SDK's HTTP handler in [ForwardIdentity] to
// carry them there. The transport is streamable HTTP when detected, and
// otherwise what [WithTransport] says.
//
// # Decisions
//
//   - The chain runs for an unknown tool too (guards and audit see the
//     attempt, with code unknown_tool and no raw message); the client then
//     gets the SDK's own protocol error.
//   - A *jsonrpc.Error that a handler returns is treated as a raw error
//     (its message is not known to be public), except the SDK's URL
//     elicitation error, which passes through with the SDK's message.
//   - The SDK's input-validation failure of a typed tool is recognized by
//     its shape (a plain error whose text starts with
//     `validating "arguments": `); a failure to decode validated arguments
//     into the handler's Go type is a server bug and is scrubbed.
//   - The SDK writes a response even for a call the client cancelled; the
//     adapter makes it a content-free canceled result.
package mcpsdk
