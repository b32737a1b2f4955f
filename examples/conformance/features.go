//lint:file-ignore SA1019 the conformance suite still exercises logging and sampling, deprecated by protocol 2026-07-28 but served by both SDKs

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixtures the conformance scenarios ask for, made here: a 1×1 red PNG
// and a WAV of eight samples of 8-bit mono silence.
var (
	redPixelPNG = onePixelPNG()
	silenceWAV  = shortWAV()
)

func onePixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding an in-memory image cannot fail
	}
	return b.Bytes()
}

func shortWAV() []byte {
	const rate, samples = 8000, 8
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // mono
	le(uint32(rate)) // sample rate
	le(uint32(rate)) // byte rate
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples))
	return b.Bytes()
}

// noArgs is the input schema of the tools that take no argument.
var noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

// elicitSchemas are the forms the elicitation tools ask for, by tool.
var elicitSchemas = map[string]json.RawMessage{
	"test_elicitation": json.RawMessage(`{"type":"object","properties":{
		"username":{"type":"string","description":"User's response"},
		"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`),
	"test_elicitation_sep1034_defaults": json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","description":"User name","default":"John Doe"},
		"age":{"type":"integer","description":"User age","default":30},
		"score":{"type":"number","description":"User score","default":95.5},
		"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","description":"Verification status","default":true}}}`),
	"test_elicitation_sep1330_enums": json.RawMessage(`{"type":"object","properties":{
		"untitledSingle":{"type":"string","description":"Pick one","enum":["option1","option2","option3"]},
		"titledSingle":{"type":"string","description":"Pick one","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
		"legacyEnum":{"type":"string","description":"Pick one","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
		"untitledMulti":{"type":"array","description":"Pick some","items":{"type":"string","enum":["option1","option2","option3"]}},
		"titledMulti":{"type":"array","description":"Pick some","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`),
}

// jsonSchema2020 is an input schema with JSON Schema 2020-12 keywords that
// a server must list as given.
var jsonSchema2020 = json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
	"$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
	"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`)

// subscriptions is the set of resource URIs some client subscribed to.
type subscriptions struct {
	mu   sync.Mutex
	uris map[string]bool
}

func (s *subscriptions) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uris == nil {
		s.uris = make(map[string]bool)
	}
	s.uris[req.Params.URI] = true
	return nil
}

func (s *subscriptions) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.uris, req.Params.URI)
	return nil
}

// newServer returns a go-sdk server with every tool, resource, prompt and
// capability the conformance suite's server scenarios exercise, registered
// natively: toolmw wraps them unchanged when the server is served with it.
func newServer() *mcp.Server {
	subs := new(subscriptions)
	s := mcp.NewServer(&mcp.Implementation{Name: "toolmw-conformance", Version: "0.2.0"}, &mcp.ServerOptions{
		CompletionHandler:  complete,
		SubscribeHandler:   subs.subscribe,
		UnsubscribeHandler: subs.unsubscribe,
	})
	addTools(s)
	addResources(s)
	addPrompts(s)
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func addTools(s *mcp.Server) {
	tool := func(name, desc string, schema json.RawMessage, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema}, h)
	}
	tool("test_simple_text", "Returns one text content.", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("This is a simple text response for testing."), nil
		})
	tool("test_image_content", "Returns one image content (a 1x1 PNG).", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}}}, nil
		})
	tool("test_audio_content", "Returns one audio content (a short WAV).", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: silenceWAV, MIMEType: "audio/wav"}}}, nil
		})
	tool("test_embedded_resource", "Returns one embedded resource.", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
			}}}}, nil
		})
	tool("test_multiple_content_types", "Returns text, image and resource content.", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Multiple content types test:"},
				&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
				}},
			}}, nil
		})
	tool("test_tool_with_logging", "Sends three log messages while it runs.", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "conformance", Data: msg}); err != nil {
					return nil, err
				}
			}
			return text("Tool with logging executed successfully"), nil
		})
	tool("test_error_handling", "Always fails, with an isError result of its own.", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// A tool's own isError result is public: the client reads its
			// text, with toolmw as without. (A returned Go error would be
			// a JSON-RPC error with the raw text without toolmw, and a
			// generic failure with it.)
			res := text("This tool intentionally returns an error for testing")
			res.IsError = true
			return res, nil
		})
	tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				if token == nil {
					continue
				}
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100}); err != nil {
					return nil, err
				}
			}
			return text("Tool with progress executed successfully"), nil
		})
	tool("test_sampling", "Asks the client's model to answer a prompt.",
		json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				Prompt string `json:"prompt"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: args.Prompt}}},
				MaxTokens: 100,
			})
			if err != nil {
				return nil, err
			}
			answer := ""
			if t, ok := res.Content.(*mcp.TextContent); ok {
				answer = t.Text
			}
			return text("LLM response: " + answer), nil
		})
	tool("test_elicitation", "Asks the user for a username and an email.",
		json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				Message string `json:"message"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return elicit(ctx, req, args.Message, elicitSchemas["test_elicitation"], "User response: ")
		})
	tool("test_elicitation_sep1034_defaults", "Elicits a form whose fields all have defaults.", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(ctx, req, "Please review and update the form fields with defaults", elicitSchemas["test_elicitation_sep1034_defaults"], "Elicitation completed: ")
		})
	tool("test_elicitation_sep1330_enums", "Elicits a form with the five kinds of enum.", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(ctx, req, "Please select options from the enum fields", elicitSchemas["test_elicitation_sep1330_enums"], "Elicitation completed: ")
		})
	tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", jsonSchema2020,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("JSON Schema 2020-12 tool called"), nil
		})
	tool("test_reconnection", "Closes its SSE stream mid-call; the answer arrives after the client reconnects.", noArgs,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if ex := req.Extra; ex != nil && ex.CloseSSEStream != nil {
				ex.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 200 * time.Millisecond})
			}
			select {
			case <-time.After(400 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return text("Reconnection test completed successfully"), nil
		})
}

// elicit asks the client for a form and reports the answer.
func elicit(ctx context.Context, req *mcp.CallToolRequest, msg string, schema json.RawMessage, prefix string) (*mcp.CallToolResult, error) {
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: schema})
	if err != nil {
		return nil, err
	}
	content, err := json.Marshal(res.Content)
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("%saction=%s, content=%s", prefix, res.Action, content)), nil
}

func addResources(s *mcp.Server) {
	s.AddResource(&mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a PNG)", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: redPixelPNG}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients subscribe to", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "Watched resource content."}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Description: "A resource template with an id", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
}

func addPrompts(s *mcp.Server) {
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two arguments", Arguments: []*mcp.PromptArgument{
		{Name: "arg1", Description: "First test argument", Required: true},
		{Name: "arg2", Description: "Second test argument", Required: true},
	}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{
			Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"]),
		})}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds a resource", Arguments: []*mcp.PromptArgument{
		{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
	}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
			user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
			user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
		}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}),
				user(&mcp.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
}

// complete suggests values for prompt and template arguments: the known
// words that start with what the client typed.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	out := suggest(req.Params.Argument.Value)
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
}

// suggest returns the known words that start with prefix, never nil: the
// protocol wants an array.
func suggest(prefix string) []string {
	out := []string{}
	for _, w := range []string{"paris", "park", "party", "hello", "world", "123"} {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
