// Command adapter is a third MCP adapter, written on the adapter kit
// (toolctx/adapter) with no SDK at all: a minimal MCP server over the stdio
// transport (newline-delimited JSON-RPC on stdin and stdout) that answers
// initialize, ping, tools/list and tools/call, and serves toolmw handlers
// behind a toolmw chain. It keeps the one rule as the go-sdk and mcp-go
// adapters do, because the kit does what makes an adapter correct: the
// chain runs contained, its result is checked before the hooks record it
// and before it is sent, nothing is sent about a call once it has ended,
// and the kit's frame guard stands on the stdio (the one go-sdk's adapter
// puts on go-sdk's): a line the loop could not decode is answered with a
// fixed message. What is left here is the codec: decode the request (and
// say how, for the guard), encode the result.
//
//	go run ./examples/adapter   # then speak MCP on its stdin
//
// It handles one request at a time, and has no resources, prompts,
// logging or cancellation: enough to show the kit, not a server to deploy.
package main
