// Command client is the five-minute tour's MCP client: it connects to the demo
// server (examples/server) with the official go-sdk client, calls every demo
// tool and prints exactly what the client saw. It speaks streamable HTTP
// (-url, the default), the older HTTP+SSE transport (-sse) or stdio (-stdio,
// starting the server itself):
//
//	go run ./examples/server &
//	go run ./examples/client -url http://127.0.0.1:8080/mcp
//	go run ./examples/client -sse http://127.0.0.1:8080/sse
//	go run ./examples/client -stdio 'go run ./examples/server -stdio'
//
// With -stdio the server's stderr (its diagnostics) is passed through to the
// client's stderr.
package main
