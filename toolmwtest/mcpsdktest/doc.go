// Package mcpsdktest runs toolmwtest's leak check against a server built on
// github.com/modelcontextprotocol/go-sdk, with that SDK's own client. It
// holds go-sdk's connector ([Kit]); the runs are toolmwtest.Kit's.
//
// Kit().Run registers hostile failing tools next to the server's own, connects
// over the transports named in [Config] (in-memory pipes, streamable HTTP
// stateful and stateless on an httptest server on 127.0.0.1, or the stdio
// of a binary the user builds), calls every failing tool and every tool of
// the server's own with arguments made from its input schema (valid, empty,
// wrong types), records every byte the client receives, and fails the test
// with a report (transport, tool, shape, the offending bytes with the match
// between » and «) when a canary, a Go stack or a source path appears, when
// the server stops answering, or, with Config.Causes, when a raw cause did
// not reach diagnostics or the audit log.
//
//	func TestNoLeaks(t *testing.T) {
//		causes := new(toolmwtest.Causes)
//		mcpsdktest.Kit().Run(t, mcpsdktest.Config{
//			NewServer: func() *mcp.Server { return newMyServer(causes) },
//			Plan:      toolmwtest.Plan{Causes: causes},
//		})
//	}
package mcpsdktest
