//lint:file-ignore SA1019 the conformance suite still exercises logging and sampling, deprecated by protocol 2026-07-28 but served by both SDKs

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// newMCPGoServer returns an mcp-go server with the same tools, resources,
// prompts and capabilities as [newServer], registered natively; opts come
// last (toolmw's mcpgo.ServerOption, say).
func newMCPGoServer(opts ...server.ServerOption) *server.MCPServer {
	base := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithLogging(),
		server.WithElicitation(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completions{}),
		server.WithResourceCompletionProvider(completions{}),
	}
	s := server.NewMCPServer("toolmw-conformance", "0.2.0", append(base, opts...)...)
	s.EnableSampling()
	addMCPGoTools(s)
	addMCPGoResources(s)
	addMCPGoPrompts(s)
	return s
}

// settle waits before a tool returns after its last notification. mcp-go
// v1.2.1's streamable HTTP transport can drop a notification queued just
// before the result: its forwarding goroutine may hold the notification
// while the request's drain loop writes the response and stops it (seen as
// 2 of 3 log or progress messages, with and without toolmw, in about one
// run of three). The wait keeps the suite's verdict about the server, not
// about that race.
func settle() { time.Sleep(50 * time.Millisecond) }

var (
	pngBase64 = base64.StdEncoding.EncodeToString(redPixelPNG)
	wavBase64 = base64.StdEncoding.EncodeToString(silenceWAV)
)

func mgText(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(s)}}
}

func addMCPGoTools(s *server.MCPServer) {
	tool := func(name, desc string, schema json.RawMessage, h server.ToolHandlerFunc) {
		s.AddTool(mcp.NewToolWithRawSchema(name, desc, schema), h)
	}
	tool("test_simple_text", "Returns one text content.", noArgs,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mgText("This is a simple text response for testing."), nil
		})
	tool("test_image_content", "Returns one image content (a 1x1 PNG).", noArgs,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(pngBase64, "image/png")}}, nil
		})
	tool("test_audio_content", "Returns one audio content (a short WAV).", noArgs,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(wavBase64, "audio/wav")}}, nil
		})
	tool("test_embedded_resource", "Returns one embedded resource.", noArgs,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
			})}}, nil
		})
	tool("test_multiple_content_types", "Returns text, image and resource content.", noArgs,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("Multiple content types test:"),
				mcp.NewImageContent(pngBase64, "image/png"),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
				}),
			}}, nil
		})
	tool("test_tool_with_logging", "Sends three log messages while it runs.", noArgs,
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			srv := server.ServerFromContext(ctx)
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				if err := srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "conformance", msg)); err != nil {
					return nil, err
				}
			}
			settle()
			return mgText("Tool with logging executed successfully"), nil
		})
	tool("test_error_handling", "Always fails, with an isError result of its own.", noArgs,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("This tool intentionally returns an error for testing"), nil
		})
	tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", noArgs,
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var token mcp.ProgressToken
			if req.Params.Meta != nil {
				token = req.Params.Meta.ProgressToken
			}
			srv := server.ServerFromContext(ctx)
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				if token == nil {
					continue
				}
				if err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": token, "progress": p, "total": 100,
				}); err != nil {
					return nil, err
				}
			}
			settle()
			return mgText("Tool with progress executed successfully"), nil
		})
	tool("test_sampling", "Asks the client's model to answer a prompt.",
		json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := server.ServerFromContext(ctx).RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
				MaxTokens: 100,
			}})
			if err != nil {
				return nil, err
			}
			answer := ""
			if t, ok := res.Content.(mcp.TextContent); ok {
				answer = t.Text
			}
			return mgText("LLM response: " + answer), nil
		})
	elicitTool := func(name, desc string, schema json.RawMessage, message func(mcp.CallToolRequest) string, prefix string) {
		tool(name, desc, schema, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := server.ServerFromContext(ctx).RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: message(req), RequestedSchema: elicitSchemas[name],
			}})
			if err != nil {
				return nil, err
			}
			content, err := json.Marshal(res.Content)
			if err != nil {
				return nil, err
			}
			return mgText(fmt.Sprintf("%saction=%s, content=%s", prefix, res.Action, content)), nil
		})
	}
	elicitTool("test_elicitation", "Asks the user for a username and an email.",
		json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
		func(req mcp.CallToolRequest) string { return req.GetString("message", "") }, "User response: ")
	elicitTool("test_elicitation_sep1034_defaults", "Elicits a form whose fields all have defaults.", noArgs,
		func(mcp.CallToolRequest) string { return "Please review and update the form fields with defaults" }, "Elicitation completed: ")
	elicitTool("test_elicitation_sep1330_enums", "Elicits a form with the five kinds of enum.", noArgs,
		func(mcp.CallToolRequest) string { return "Please select options from the enum fields" }, "Elicitation completed: ")
	tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", jsonSchema2020,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mgText("JSON Schema 2020-12 tool called"), nil
		})
}

func addMCPGoResources(s *server.MCPServer) {
	static := func(uri, name, desc, mime string, contents mcp.ResourceContents) {
		s.AddResource(mcp.NewResource(uri, name, mcp.WithResourceDescription(desc), mcp.WithMIMEType(mime)),
			func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{contents}, nil
			})
	}
	static("test://static-text", "static-text", "A static text resource", "text/plain",
		mcp.TextResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."})
	static("test://static-binary", "static-binary", "A static binary resource (a PNG)", "image/png",
		mcp.BlobResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: pngBase64})
	static("test://watched-resource", "watched-resource", "A resource clients subscribe to", "text/plain",
		mcp.TextResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content."})
	s.AddResourceTemplate(mcp.NewResourceTemplate("test://template/{id}/data", "template",
		mcp.WithTemplateDescription("A resource template with an id"), mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			uri := req.Params.URI
			id := strings.TrimSuffix(strings.TrimPrefix(uri, "test://template/"), "/data")
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
		})
}

func addMCPGoPrompts(s *server.MCPServer) {
	user := func(c mcp.Content) mcp.PromptMessage { return mcp.NewPromptMessage(mcp.RoleUser, c) }
	s.AddPrompt(mcp.NewPrompt("test_simple_prompt", mcp.WithPromptDescription("A prompt without arguments")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{user(mcp.NewTextContent("This is a simple prompt for testing."))}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_arguments", mcp.WithPromptDescription("A prompt with two arguments"),
		mcp.WithArgument("arg1", mcp.ArgumentDescription("First test argument"), mcp.RequiredArgument()),
		mcp.WithArgument("arg2", mcp.ArgumentDescription("Second test argument"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{user(mcp.NewTextContent(
				fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])))}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_embedded_resource", mcp.WithPromptDescription("A prompt that embeds a resource"),
		mcp.WithArgument("resourceUri", mcp.ArgumentDescription("URI of the resource to embed"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				user(mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."})),
				user(mcp.NewTextContent("Please process the embedded resource above.")),
			}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_image", mcp.WithPromptDescription("A prompt with an image")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				user(mcp.NewImageContent(pngBase64, "image/png")),
				user(mcp.NewTextContent("Please analyze the image above.")),
			}}, nil
		})
}

// completions suggests values for prompt and template arguments, as
// [complete] does for the go-sdk.
type completions struct{}

func (completions) CompletePromptArgument(_ context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	v := suggest(arg.Value)
	return &mcp.Completion{Values: v, Total: len(v)}, nil
}

func (completions) CompleteResourceArgument(_ context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	v := suggest(arg.Value)
	return &mcp.Completion{Values: v, Total: len(v)}, nil
}
