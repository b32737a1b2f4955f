package mcpgotest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolmwtest"
)

// addTool is the kit's AddTool: a raw tool handler, whose input schema
// takes any object.
func addTool(s *server.MCPServer, name, desc string, run func() (*mcp.CallToolResult, error)) {
	s.AddTool(mcp.NewToolWithRawSchema(name, desc, json.RawMessage(`{"type":"object"}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return run() })
}

// result is the kit's Result.
func result(r toolmwtest.Reply) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{mcp.NewTextContent(r.Text)}, StructuredContent: r.Structured}
}

// addTypedFailingTool is the kit's AddTypedFailingTool: an
// mcp.NewStructuredToolHandler handler, for all but mcp-go's own shapes,
// which return results (plain handlers, registered by the kit).
func addTypedFailingTool(s *server.MCPServer, name, desc string, f toolmwtest.Failure) bool {
	if strings.HasPrefix(f.Shape, ownShape) {
		return false
	}
	s.AddTool(mcp.NewToolWithRawSchema(name, desc, json.RawMessage(`{"type":"object"}`)),
		mcp.NewStructuredToolHandler(func(context.Context, mcp.CallToolRequest, struct{}) (any, error) {
			return nil, f.Call()
		}))
	return true
}

// ownShape starts the shape of mcp-go's own failures (sdkShapes).
const ownShape = "mcp-go: "

var sdkShapes = []func(c string) toolmwtest.Failure{
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure(ownShape+"a handler's own URL-elicitation wire error with data", c, toolmwtest.Opaque, func() error {
			return mcp.URLElicitationRequiredError{Elicitations: []mcp.ElicitationParams{{Mode: "url", Message: c, URL: "https://idp.example/" + c}}}
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure(ownShape+"a handler's own isError result with the canary in its _meta and structured content", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent("the report is not ready")},
				StructuredContent: map[string]any{"nested": map[string]any{"cause": c}},
				Result:            mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{"cause": c}}}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure(ownShape+"a success with invalid UTF-8 in its text and structured content", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok \xff\xfe")},
				StructuredContent: map[string]any{"s\xff": "\xc3"}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure(ownShape+"a handler error wrapping server.ErrToolNotFound", c, toolmwtest.Raw, func() error {
			return fmt.Errorf("%w: %s", server.ErrToolNotFound, c)
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure(ownShape+"an isError result of mcp.NewToolResultErrorFromErr", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(mcp.NewToolResultErrorFromErr("the report failed", nil))
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure(ownShape+"a success whose text block's type field is the canary", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: c, Text: "ok"}}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure(ownShape+"a success whose embedded resource, the canary as its text, has no uri", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{Text: c})}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure(ownShape+"success whose structured content cannot be encoded", c, toolmwtest.Raw, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}, StructuredContent: toolmwtest.Unencodable{Secret: c}})
		})
	},
}
