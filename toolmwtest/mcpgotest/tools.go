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

// Failures returns the failures [Run] registers for seed and n: those of
// [toolmwtest.Generate], and shapes of mcp-go's own (a handler's own
// URL-elicitation wire error carrying data, a result whose structured
// content cannot be encoded, an isError text of mcp.NewToolResultError
// naming the cause).
func Failures(seed int64, n int) []toolmwtest.Failure {
	return toolmwtest.GenerateWith(seed, n, sdkShapes, "mcpgo")
}

// AddFailingTools registers one tool per failure on s, named as
// [toolmwtest.ToolName] says, and [toolmwtest.AliveTool]; even indexes (and mcp-go's own shapes, which
// return results) are plain handlers, odd ones mcp.NewStructuredToolHandler
// handlers, so both of the SDK's ways of turning an error into a response
// are tried.
func AddFailingTools(s *server.MCPServer, fs []toolmwtest.Failure) {
	addTool(s, toolmwtest.AliveTool, func() (toolmwtest.Reply, error) { return toolmwtest.Reply{Text: "ok"}, nil })
	for i, f := range fs {
		tool := mcp.NewToolWithRawSchema(toolmwtest.ToolName(i), "toolmwtest: fails as "+f.Shape, json.RawMessage(`{"type":"object"}`))
		if i%2 == 0 || strings.HasPrefix(f.Shape, ownShape) {
			s.AddTool(tool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return toolmwtest.Returned[*mcp.CallToolResult](f)
			})
			continue
		}
		s.AddTool(tool, mcp.NewStructuredToolHandler(func(context.Context, mcp.CallToolRequest, struct{}) (any, error) {
			return nil, f.Call()
		}))
	}
}

// ownShape starts the shape of mcp-go's own failures.
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
		return toolmwtest.NewFailure(ownShape+"success whose structured content cannot be encoded", c, toolmwtest.Raw, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}, StructuredContent: toolmwtest.Unencodable{Secret: c}})
		})
	},
}
