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

// structuredFailurePrefix is how mcp.NewStructuredToolHandler (mcp-go
// v1.2) words the isError result it makes of its handler's error:
// "tool execution failed: " and err.Error(), the raw text of any error.
const structuredFailurePrefix = "tool execution failed: "

// serializeFailurePrefix is how mcp.NewToolResultStructuredOnly (which
// mcp.NewStructuredToolHandler calls) words the text content of a result
// whose structured content did not encode: the encoder's error, which may
// quote the value or a MarshalJSON method's error.
const serializeFailurePrefix = "Error serializing structured content: "

// StructuredHandlerError is the cause the adapter records for a result
// made by mcp.NewStructuredToolHandler that holds a raw error's text: the
// isError result it makes of its handler's error ("tool execution failed: "
// and err.Error()), and the result of mcp.NewToolResultStructuredOnly whose
// structured content did not encode the first time ("Error serializing
// structured content: " and the encoder's error, although the result may
// encode by the time it is sent). The adapter treats both as raw failures:
// the client gets the generic message; the audit row and diagnostics get
// Text.
//
// The original error value is lost by then: mcp-go keeps only its text. To
// keep it (and to let an [errs.Error] reach the client with its public
// message), register the handler with [StructuredHandler] instead of
// mcp.NewStructuredToolHandler.
type StructuredHandlerError struct {
	// Text is the result's text, raw.
	Text string
}

// Error returns the result's text.
func (e *StructuredHandlerError) Error() string { return e.Text }

// structuredHandlerFailure reports whether r is one of the results
// described at [StructuredHandlerError] (the isError result of one text
// content starting with mcp-go's failure prefix and no structured content,
// or the success of one text content starting with its serialization
// prefix and structured content) and returns its text. A handler's own
// result worded the same way is treated alike: scrubbing a public message
// loses no secret, passing a raw one would.
func structuredHandlerFailure(r *mcp.CallToolResult) (string, bool) {
	if len(r.Content) != 1 || r.IsError == (r.StructuredContent != nil) {
		return "", false
	}
	var text string
	switch tc := r.Content[0].(type) {
	case mcp.TextContent:
		text = tc.Text
	case *mcp.TextContent:
		if tc == nil {
			return "", false
		}
		text = tc.Text
	default:
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

// errBind is the public message of arguments that do not decode into a
// typed handler's argument type.
const errBind = "invalid arguments: the arguments do not match the tool's parameters"

// bind decodes the arguments as mcp-go's typed handlers do. A failure is an
// [errs.InvalidArguments]: a sentence about the argument when encoding/json
// says what was wrong with the JSON ("count: expected an integer, got a
// string", built from the decoder's structured error, never from its text),
// and a fixed public message otherwise (an error from a custom UnmarshalJSON
// may say anything). The decoder's error is kept as the cause.
func bind[T any](request mcp.CallToolRequest) (T, error) {
	var args T
	if err := request.BindArguments(&args); err != nil {
		// A type error is described only when its words are the caller's:
		// an UnmarshalJSON method of T may return one holding anything.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && !feedback.FromCaller(err, rawArguments(&request)) {
			return args, errs.InvalidArguments(errBind).WithCause(err)
		}
		if problems, ok := feedback.JSONProblems(err, rawArguments(&request)); ok {
			return args, errs.InvalidArguments(feedback.Message(problems)).WithDetail(feedback.Detail(problems)).WithCause(err)
		}
		return args, errs.InvalidArguments(errBind).WithCause(err)
	}
	return args, nil
}

// TypedHandler is mcp.NewTypedToolHandler for servers that run the toolmw
// adapter: h's arguments are decoded into T, and an error h returns reaches
// the chain as the call's raw cause (an [errs.Error] keeps its public
// message; anything else is scrubbed). Arguments that do not decode are an
// [errs.CodeInvalidArguments] failure instead of mcp-go's
// "failed to bind arguments" isError text.
//
// Without the adapter's middleware on the server, a returned error reaches
// the client as mcp-go's -32603 error text: use it only behind [Middleware]
// or [ServerOption].
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
// the toolmw adapter. mcp-go's version turns every error of h into an
// isError result whose text is "tool execution failed: " and err.Error(),
// raw causes included (the adapter scrubs those results as
// [StructuredHandlerError], keeping only their text). StructuredHandler
// instead returns h's error to the chain as the call's raw cause: an
// [errs.Error] reaches the client with its public message, anything else is
// scrubbed, and diagnostics get the error value itself. A success is the
// result's JSON as its structured content and its text content, as in
// mcp.NewToolResultStructuredOnly, encoded once; a result that does not
// encode is a raw failure whose cause is the encoder's error.
//
// Without the adapter's middleware on the server, a returned error reaches
// the client as mcp-go's -32603 error text: use it only behind [Middleware]
// or [ServerOption].
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
