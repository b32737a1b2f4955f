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
// _meta["io.github.toolmw/error"]. Successful results are sent exactly as the SDK
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
// carry them there. The transport is streamable HTTP when detected, SSE (with
// the session id) for a session opened through the SDK's SSE handler wrapped
// in [SSE], and otherwise what [WithTransport] says.
//
// # Decisions
//
//   - The chain runs for an unknown tool too (guards and audit see the
//     attempt, with code unknown_tool and no raw message); the client then
//     gets an unknown-tool protocol error the adapter builds from the name
//     it sent.
//   - Only the SDK's own refusals before a handler is entered pass as
//     such, and they are recognized by where they arose, never by their
//     type, code or text: an unknown tool is one that is not in the
//     server's tool table (read through the SDK's tools/list); a typed
//     tool's input-validation failure is one that the adapter's own
//     validation of the same arguments against the tool's input schema
//     reproduces, and the client gets the adapter's message. Anything a
//     handler or a middleware returns — a *jsonrpc.Error with any code,
//     message or data, an error whose text starts like the SDK's — is
//     that handler's failure and is scrubbed. The SDK exposes no mark of
//     a handler's entry; see origin.go for the reasoning.
//   - The one exception is deliberate: a handler's URL elicitation
//     (mcp.URLElicitationRequiredError, code -32042) reaches the client as
//     that protocol error, with the SDK's fixed message and only the
//     protocol's fields of its elicitations (mode "url", message, url,
//     elicitationId), which are meant for the user; anything else in it
//     is dropped, and data that is not a well-formed URL elicitation makes
//     it an ordinary scrubbed failure. Put nothing in an elicitation's
//     message or URL that the user may not see.
//   - A failure to decode validated arguments into the handler's Go type
//     is a server bug and is scrubbed.
//   - A result that cannot be encoded (a chan, a func, a NaN, a cycle, a
//     MarshalJSON that fails or panics, a json.RawMessage that is not
//     JSON, a value nested deeper than the SDK's client decodes, in the
//     structured content or any _meta) is an internal failure
//     inside the chain, with its cause in diagnostics and the row; the
//     SDK would otherwise send nothing and the call would hang. The
//     structured content and every _meta value are handed to the SDK
//     encoded, so each is encoded once (a MarshalJSON is never called
//     again on the SDK's goroutine, where a panic would end the server).
//     A result an interceptor made that cannot be encoded is found
//     only after the chain: the client gets the generic failure and the
//     fallback logger the cause. Size is not checked: on SSE (and on
//     streamable HTTP when a response streams as an event) the SDK's
//     client refuses an event over mcp.DefaultMaxEventSize (16 MiB) and
//     closes its session, so bound results with middleware.MaxResultBytes
//     there.
//   - The chain runs contained (see toolctx/adapter): a runtime.Goexit in
//     it (what t.FailNow does) ends the call as an internal failure, and
//     the server goes on as it was.
//   - A multi-round-trip request's input-required result (protocol
//     2026-07-28), a native handler's InputRequests and RequestState or a
//     toolmw handler's [toolctx.InputRequiredResult], reaches the chain as
//     [toolctx.CallResult.InputRequired] and the client with its requests,
//     state and result type, whatever the chain did to the result (see
//     mrtr.go). For a client older than 2026-07-28 the SDK's legacy bridge,
//     inside the adapter, fulfils the requests and calls the handler again
//     within the one tools/call the chain runs for. go-sdk v1.8.0 has no
//     tasks (no tasks/* method or task type in its mcp package).
//   - The SDK writes a response even for a call the client cancelled; the
//     adapter makes it a content-free canceled result. A raw error a
//     handler returns after its context ended keeps its raw message for
//     the row (classified as canceled or timeout); a late success becomes
//     the context's error.
package mcpsdk
