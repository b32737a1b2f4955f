package mcpsdktest

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
	"github.com/toolmw/toolmw/toolmwtest"
)

// BehaviourConfig says what [CheckBehaviour] checks.
type BehaviourConfig = toolmwtest.BehaviourConfig[*mcp.Server]

// CheckBehaviour asserts the rows of toolmw's behaviour table (the README's
// "What the caller sees, what the server keeps") on a server, over the
// in-memory transport, as [toolmwtest.CheckRows] describes. Each broken row
// is a problem of the result.
func CheckBehaviour(ctx context.Context, cfg BehaviourConfig) (*toolmwtest.Result, error) {
	return kit.CheckBehaviour(ctx, cfg)
}

// addTool is the kit's AddTool: a raw tool handler, described by its name.
func addTool(s *mcp.Server, name string, run func() (toolmwtest.Reply, error)) {
	s.AddTool(&mcp.Tool{Name: name, Description: "toolmwtest: " + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, err := run()
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, StructuredContent: r.Structured}, nil
		})
}

// addCountTool is the kit's AddCountTool: a typed tool, whose input schema
// the SDK infers and validates.
func addCountTool(s *mcp.Server, name string) {
	type countIn struct {
		Count int `json:"count"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: "toolmwtest: takes a count"},
		func(context.Context, *mcp.CallToolRequest, countIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
		})
}

// newGuarded is the kit's NewGuarded.
func newGuarded(m toolctx.Middleware, visible func(*toolctx.Request) bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "toolmwtest", Version: "0"}, nil)
	mcpsdk.Install(s, m, mcpsdk.WithVisibility(visible))
	return s
}

// identify is the kit's Identify: a stateful session's calls get the
// HTTP request's identity only through mcpsdk.ForwardIdentity, which
// needs a bearer token (the layer in front stands for the one that
// checked it).
func identify(h http.Handler) http.Handler {
	fwd := mcpsdk.ForwardIdentity(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer toolmwtest")
		fwd.ServeHTTP(w, r)
	})
}
