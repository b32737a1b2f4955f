package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/feedback"
)

// How mcp-go v1.2 words the results described at StructuredHandlerError.
const (
	structuredFailurePrefix = "tool execution failed: "
	serializeFailurePrefix  = "Error serializing structured content: "
)

// StructuredHandlerError is the cause the adapter records for a result of
// mcp.NewStructuredToolHandler that holds a raw error's text: its isError
// result "tool execution failed: " + err.Error(), or a result whose
// structured content did not encode ("Error serializing structured
// content: " + the encoder's error). Both are scrubbed; the row and
// diagnostics get Text. mcp-go keeps only the text: register the handler
// with [StructuredHandler] to keep the error itself.
type StructuredHandlerError struct {
	// Text is the result's text, raw.
	Text string
}

// Error returns the result's text.
func (e *StructuredHandlerError) Error() string { return e.Text }

// structuredHandlerFailure reports whether r is one of the results
// described at [StructuredHandlerError], and returns its text; a handler's
// own result worded alike is treated alike (scrubbing loses no secret).
func structuredHandlerFailure(r *mcp.CallToolResult) (string, bool) {
	if r.IsError == (r.StructuredContent != nil) {
		return "", false
	}
	text, ok := soleText(r)
	if !ok {
		return "", false
	}
	prefix := serializeFailurePrefix
	if r.IsError {
		prefix = structuredFailurePrefix
	}
	if !strings.HasPrefix(text, prefix) {
		return "", false
	}
	return text, true
}

// soleText is the text of r's only content block, when it is text (a
// value or a pointer: mcp-go takes either).
func soleText(r *mcp.CallToolResult) (string, bool) {
	if len(r.Content) != 1 {
		return "", false
	}
	v, _ := pointee(r.Content[0])
	tc, ok := v.(mcp.TextContent)
	return tc.Text, ok
}

// errBind is the public message of arguments that do not decode into a
// typed handler's argument type.
const errBind = "invalid arguments: the arguments do not match the tool's parameters"

// bind decodes the arguments as mcp-go's typed handlers do. A failure is an
// [errs.InvalidArguments]: a sentence built from encoding/json's structured
// error when its words are the caller's, else errBind; the cause is kept.
func bind[T any](request mcp.CallToolRequest) (T, error) {
	var args T
	if err := request.BindArguments(&args); err != nil {
		raw := arguments(&request).JSON()
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) || feedback.FromCaller(err, raw) {
			if problems, ok := feedback.JSONProblems(err, raw); ok {
				return args, errs.InvalidArguments(feedback.Message(problems)).WithDetail(feedback.Detail(problems)).WithCause(err)
			}
		}
		return args, errs.InvalidArguments(errBind).WithCause(err)
	}
	return args, nil
}

// TypedHandler is mcp.NewTypedToolHandler for servers that run the adapter:
// an error h returns reaches the chain as the call's raw cause, and
// arguments that do not decode into T are an [errs.CodeInvalidArguments]
// failure. Use it only behind [Middleware] or [ServerOption]: without them
// mcp-go sends the error's text.
func TypedHandler[T any](h mcp.TypedToolHandlerFunc[T]) server.ToolHandlerFunc {
	return func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := bind[T](request)
		if err != nil {
			return nil, err
		}
		return h(ctx, request, args)
	}
}

// StructuredHandler is mcp.NewStructuredToolHandler for servers that run
// the adapter: h's error reaches the chain as the call's raw cause (an
// [errs.Error] keeps its public message), not as an isError text. A success
// is the result's JSON as structured and text content, encoded once; one
// that does not encode is a raw failure. Use it only behind [Middleware] or
// [ServerOption]: without them mcp-go sends the error's text.
func StructuredHandler[TArgs, TResult any](h mcp.StructuredToolHandlerFunc[TArgs, TResult]) server.ToolHandlerFunc {
	return func(ctx context.Context, request mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := bind[TArgs](request)
		if err != nil {
			return nil, err
		}
		result, err := h(ctx, request, args)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(result)
		if err != nil {
			return nil, fmt.Errorf("mcpgo: encode the structured result: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(b))}, StructuredContent: json.RawMessage(b)}, nil
	}
}
