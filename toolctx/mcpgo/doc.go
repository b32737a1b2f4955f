// Package mcpgo runs toolmw on github.com/mark3labs/mcp-go (v1.2): a tool
// middleware that wraps every tool call of an *server.MCPServer in a toolmw
// chain, and [AddTool] to register toolmw Handlers as mcp-go tools.
//
//	chain := middleware.New(
//		middleware.After(auditFn),
//		middleware.Diagnostics(diagFn),
//		middleware.Normalize(errs.Normalizer{}),
//		middleware.Recover,
//	)
//	s := server.NewMCPServer("demo", "1.0.0",
//		mcpgo.ServerOption(chain.Middleware()), // first: outermost
//		server.WithInputSchemaValidation(),
//	)
//	s.AddTool(nativeTool, nativeHandler)           // unchanged mcp-go handler
//	err := mcpgo.AddTool(s, tool, toolmwHandler)    // checked at registration
//
// What the client sees, on every mcp-go transport (in-process, stdio, SSE,
// streamable HTTP):
//
//   - A Go error returned by a handler or by an mcp-go middleware inside the
//     adapter never becomes mcp-go's JSON-RPC -32603 error carrying
//     err.Error(): the adapter answers with an isError result holding the
//     public message only (the generic message for a raw error; the public
//     message of an [errs.Error]) and _meta["io.github.toolmw/error"] =
//     {"code": ..., "detail": ...}.
//   - A panic never carries its value to the client, even with
//     server.WithRecovery inside the adapter (its error text holds the panic
//     value; the adapter scrubs it like any raw error).
//   - A handler's own isError result keeps its content (public by
//     definition), with the code "tool_error".
//   - Successes pass through losslessly: the adapter returns the very
//     *mcp.CallToolResult the handler returned unless an interceptor
//     replaced the result.
//   - Nothing mcp-go does after the tool middleware can fail with a raw
//     value in its message, because the adapter does it first, inside the
//     chain: a success that mcp-go could not encode (a chan, a func, NaN, a
//     cycle, a MarshalJSON that fails or panics, invalid raw JSON) is a raw
//     failure whose cause is the encoder's error; and on a server with
//     server.WithOutputSchemaValidation, a native tool's success that fails
//     the tool's output schema is a raw failure whose cause is the
//     validator's error (mcp-go would send that text, which quotes the
//     values). A tool registered with [AddTool] always has its output
//     checked against its output schema, as mcpsdk.AddTool does. The client
//     gets the generic message; the chain's hooks get the cause. A result an
//     interceptor builds is checked again after the chain; one that fails
//     then is answered with the generic failure and logged ([WithFallbackLogger]),
//     the hooks having seen it as it was.
//   - The chain runs contained (see toolctx/adapter): a runtime.Goexit in
//     a handler or interceptor ends that call as an internal failure and
//     neither kills one of mcp-go's stdio workers nor the in-process
//     caller's goroutine.
//   - A handler's own JSON-RPC wire error (mcp.URLElicitationRequiredError,
//     which mcp-go forwards to older clients with its code and data, or any
//     error that renders itself as one) is that handler's failure: it is
//     normalized like any other error. Only mcp-go's own rejections before
//     the middleware (an unknown tool) are protocol errors.
//   - mcp.NewStructuredToolHandler makes an isError result of its
//     handler's error, "tool execution failed: " and err.Error(); the
//     adapter scrubs such a result as a [StructuredHandlerError] (the row
//     keeps its text). Register typed handlers with [StructuredHandler] or
//     [TypedHandler] instead, so that their errors reach the chain as
//     errors: an [errs.Error] then keeps its public message. What cannot be
//     closed: a handler's own isError result is public by definition, so a
//     native handler that puts err.Error() into one itself
//     (mcp.NewToolResultError(err.Error()), NewToolResultErrorFromErr) is
//     sent as it is.
//
// Multi-round-trip requests and tasks (protocol 2026-07-28, and mcp-go's
// experimental tasks):
//
//   - an input-required result (mcp-go's ResultType "input_required" with
//     InputRequests and RequestState, or [toolctx.InputRequiredResult])
//     reaches the chain as [toolctx.CallResult.InputRequired] and the client
//     with its requests, state and result type; mcp-go's legacy bridge for
//     older clients runs after the tool middleware and runs the chain again
//     for each round;
//   - mcp-go runs a task tool (s.AddTaskTool) without any tool middleware
//     and sends its error text or panic value in the task's statusMessage:
//     register task tools with [AddTaskTool], which runs the chain around
//     the task's execution. An ordinary tool that supports tasks (the
//     hybrid mode) runs through the middleware, and [ServerOption] gives its
//     execution the task id too.
//
// What mcp-go runs before any tool middleware, and how the chain still
// sees it:
//
//   - tool lookup and tool filters: an unknown tool is a JSON-RPC -32602
//     error "tool 'NAME' not found: tool not found" (a protocol error; the
//     text holds only the client's own tool name);
//   - input-schema validation with server.WithInputSchemaValidation: invalid
//     arguments are an isError result whose text is the validator's
//     feedback, without _meta["io.github.toolmw/error"]. The feedback is public: it
//     names places in the caller's own arguments, the schema's constraints
//     (published by tools/list) and the caller's values;
//   - OnBeforeCallTool hooks.
//
// The client gets mcp-go's answer to those rejections unchanged. Whether a
// call was rejected there is decided by where the answer came from (whether
// the call entered the tool middleware), never by its text. To keep
// them in the audit log, [ServerOption] also installs server hooks
// ([AddHooks]) that run the chain for them, after mcp-go has answered,
// around a handler returning [errs.UnknownTool] (code "unknown_tool") or
// [errs.InvalidArguments] with the feedback (code "invalid_arguments"):
// interceptors see one call with that public error, no diagnostics event is
// emitted, and the chain's result is discarded. server.WithHooks replaces a
// server's hooks: give it before ServerOption, or, when installing the
// middleware yourself with [Middleware], call [AddHooks] on your hooks.
//
// mcp-go does not expose the JSON-RPC request id to middleware, so
// [toolctx.Request.CallID] is a generated correlation id
// (adapter.NewCallID). The transport is detected from mcp-go's session:
// in-process and streamable HTTP by what mcp-go exports
// (*server.InProcessSession, server.SessionWithStreamableHTTPConfig), SSE
// and stdio by the name of mcp-go's unexported session type, for want of
// anything exported that tells them; a session of another kind is
// [toolctx.TransportUnknown] (see [WithTransport]). The session id is the
// session's SessionID();
// the header is the HTTP request's header on HTTP transports (mcp-go gives
// an empty header elsewhere, recorded as nil); identity and request id come
// from the context, where the HTTP middleware in package middleware puts
// them (mcp-go's streamable HTTP server runs tool calls in the HTTP
// request's context).
//
// Cancellation: the in-process transport is synchronous and always hands the
// client the response the server produced, even after the client's context
// ended; the adapter answers a cancelled call with the public "canceled"
// result and no diagnostics event. Over streamable HTTP a cancelled client
// has closed its request, and nothing reaches it.
package mcpgo
