// Command conformance serves every feature the official MCP conformance
// suite (@modelcontextprotocol/conformance) exercises on a server, over
// streamable HTTP, on the go-sdk or mcp-go (-sdk): bare, or with toolmw's recommended chain
// installed around the same natively registered handlers (-toolmw). Its test
// runs the suite against both and fails when toolmw makes any check fail
// that passes without it.
//
//	go run ./examples/conformance -addr 127.0.0.1:8090 -toolmw
//	npx @modelcontextprotocol/conformance server --url http://127.0.0.1:8090/mcp
package main
