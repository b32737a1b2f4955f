// Command wrap takes an existing go-sdk server, whose typed tools are
// registered natively with mcp.AddTool and stay exactly as they are, and
// gives it the toolmw chain with one call to mcpsdk.Install. It runs the same
// calls twice, in memory, without and with toolmw, and prints what the client
// saw each time.
//
//	go run ./examples/wrap
package main
