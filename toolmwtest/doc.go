// Package toolmwtest is a test kit that proves, in a server author's own CI,
// that an MCP server keeps raw errors away from its clients: the one rule of
// toolmw ("the audit row may name the cause; the caller may not"), checked
// from the outside.
//
// It has three parts:
//
//   - [Generate] makes hostile failures: raw errors wrapped and joined in
//     every way, public errors that wrap secret causes, panics of every kind,
//     huge and odd messages, a Goexit, each carrying a fresh canary: a
//     string that must never reach the client.
//   - [Scan] looks for canaries, Go stack traces and source-file paths in
//     the bytes a client received, and [Finding] says where, with the
//     offending bytes around the match.
//   - [Causes] collects what the server side kept (diagnostics events and
//     audit rows), so that a runner can check that each raw cause reached
//     the operator.
//
// The runners that connect with each SDK's own client, register the failing
// tools next to the user's own, call everything and report, are in the
// subpackages: toolmwtest/mcpsdktest for github.com/modelcontextprotocol/go-sdk
// and toolmwtest/mcpgotest for github.com/mark3labs/mcp-go. Import the one
// for your SDK from a _test.go file. They keep only their SDK's connector
// (a [Kit]'s Dial and codec): the transports ([Transport]), the recording
// and the HTTP server of a connection ([Wire]), the run ([Check]) and the
// behaviour table ([CheckTable]) are here, so a server with no SDK
// (examples/adapter) is checked with any kit's client. toolmwtest/shapes is
// the hostile error set itself, for a package's own canary tests.
package toolmwtest
