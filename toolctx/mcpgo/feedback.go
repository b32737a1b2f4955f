package mcpgo

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/feedback"
)

// rephrase rewrites mcp-go's input-validation result res, which the client
// is about to receive, so that its text is sentences about the arguments
// and not mcp-go's own (which prints the validator's Go values), and
// returns the public error for the chain: that text, with the problems as
// data in its detail (internal/feedback).
func rephrase(res *mcp.CallToolResult, text string) *errs.Error {
	problems := feedback.MCPGoProblems(text)
	msg := feedback.Message(problems)
	res.Content = []mcp.Content{mcp.NewTextContent(msg)}
	return errs.InvalidArguments(msg).WithDetail(feedback.Detail(problems))
}
