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
// client's _meta without the io.modelcontextprotocol/ keys (untrusted); on
// streamable HTTP the request header and, from the SDK's auth.TokenInfo, the
// identity (UserID as subject, and scopes; never the token). An identity or
// request id that an HTTP layer put in the context ([toolctx.WithIdentity],
// [toolctx.WithRequestID]) is used where the context belongs to the request:
// on stdio, in-memory and stateless streamable HTTP, but not on stateful
// streamable HTTP, where the SDK's context is that of the request that
// created the session. The transport is streamable HTTP when detected, and
// otherwise what [WithTransport] says.
package mcpsdk
