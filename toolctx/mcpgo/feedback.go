package mcpgo

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/feedback"
)

// rephrase rewrites mcp-go's input-validation result res, which the client
// is about to receive, so that its text says the feedback as sentences
// about the arguments (internal/feedback), and returns the public error
// for the chain: that text, with mcp-go's own in the detail under
// "validator". Feedback that is not the schema validator's (mcp-go's
// "invalid arguments: " decoding text) is kept as it is.
func rephrase(res *mcp.CallToolResult, text string) *errs.Error {
	s := feedback.MCPGo(text)
	if s == text {
		return errs.InvalidArguments(text)
	}
	msg := "invalid arguments: " + s
	res.Content = []mcp.Content{mcp.NewTextContent(msg)}
	return errs.InvalidArguments(msg).WithDetail(map[string]any{"validator": text})
}
