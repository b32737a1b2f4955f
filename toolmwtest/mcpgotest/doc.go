// Package mcpgotest runs toolmwtest's leak check against a server built on
// github.com/mark3labs/mcp-go, with that SDK's own client: in-process,
// streamable HTTP and SSE on an httptest server on 127.0.0.1, and stdio over
// pipes. It holds mcp-go's connector ([Kit]); the runs are
// toolmwtest.Kit's. It is the mcp-go twin of toolmwtest/mcpsdktest; see
// there for what a run does.
//
//	func TestNoLeaks(t *testing.T) {
//		causes := new(toolmwtest.Causes)
//		mcpgotest.Kit().Run(t, mcpgotest.Config{
//			NewServer: func() *server.MCPServer { return newMyServer(causes) },
//			Plan:      toolmwtest.Plan{Causes: causes},
//		})
//	}
package mcpgotest
