// Command server is toolmw's demo MCP server: six demo tools on the official
// MCP Go SDK, behind the full recommended chain, with every call written to an
// audit log (SQLite by default, PostgreSQL for a fleet of replicas).
//
//	go run ./examples/server                      # streamable HTTP on 127.0.0.1:8080/mcp, HTTP+SSE on /sse
//	go run ./examples/server -stdio               # stdio; logs go to stderr only
//	go run ./examples/client -url http://127.0.0.1:8080/mcp
//	go run ./examples/audit -db toolmw-audit.db
//
// The tools together show every row of toolmw's behaviour table: what the
// caller sees, what the diagnostics hook (stderr) gets and what the audit row
// keeps.
package main
