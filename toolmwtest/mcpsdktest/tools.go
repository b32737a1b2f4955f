package mcpsdktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolmwtest"
)

// addTool is the kit's AddTool: a raw tool handler, whose input schema
// takes any object.
func addTool(s *mcp.Server, name, desc string, run func() (*mcp.CallToolResult, error)) {
	s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return run() })
}

// result is the kit's Result.
func result(r toolmwtest.Reply) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, StructuredContent: r.Structured}
}

// addTypedFailingTool is the kit's AddTypedFailingTool: a typed handler
// registered with [mcp.AddTool], which fails as any failure does.
func addTypedFailingTool(s *mcp.Server, name, desc string, f toolmwtest.Failure) bool {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			res, err := toolmwtest.Returned[*mcp.CallToolResult](f)
			return res, nil, err
		})
	return true
}

// sdkShapes are go-sdk's own failure shapes, for the kit's Failures.
var sdkShapes = []func(c string) toolmwtest.Failure{
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("a handler's own *jsonrpc.Error shaped like unknown tool", c, toolmwtest.Raw, func() error {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", c), Data: json.RawMessage(strconv.Quote(c))}
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("a handler's own *jsonrpc.Error with internal code and data", c, toolmwtest.Raw, func() error {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: c, Data: json.RawMessage(`{"dsn":` + strconv.Quote(c) + `}`)}
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("an isError result with SetError and the canary in its _meta and structured content", c, toolmwtest.Raw, func() error {
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "failed"}},
				StructuredContent: map[string]any{"dsn": c}, Meta: mcp.Meta{"cause": c}}
			res.SetError(errors.New("query: " + c))
			return toolmwtest.Carry(res)
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("a handler's own isError result with the canary in its _meta, structured content and a resource's _meta", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{IsError: true,
				Content: []mcp.Content{&mcp.TextContent{Text: "the report is not ready"},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///report", Text: "pending", Meta: mcp.Meta{"cause": c}}}},
				StructuredContent: map[string]any{"nested": map[string]any{"cause": c}}, Meta: mcp.Meta{"cause": c}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("a success with invalid UTF-8 in its text, structured content and _meta", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok \xff\xfe"}},
				StructuredContent: json.RawMessage("{\"s\":\"\xff\xc3\"}"), Meta: mcp.Meta{"k\xff": "\xfe"}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("a success whose content holds a nil block", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}, nil}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("a success whose resource link, the canary as its name, has no uri", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{Name: c}}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("a success whose embedded resource, the canary as its text, has no uri", c, toolmwtest.Opaque, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{Text: c}}}})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("a handler's *jsonrpc.Error wrapped with %w", c, toolmwtest.Raw, func() error {
			return fmt.Errorf("call backend: %w", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + c})
		})
	},
	func(c string) toolmwtest.Failure {
		return toolmwtest.NewFailure("success whose structured content cannot be encoded", c, toolmwtest.Raw, func() error {
			return toolmwtest.Carry(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: toolmwtest.Unencodable{Secret: c}})
		})
	},
}
