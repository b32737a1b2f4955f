package mcpgo

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/feedback"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// rephrase rewrites mcp-go's input-validation result res, which the client
// is about to receive, so that its text is sentences about the arguments
// and not mcp-go's own (which prints the validator's Go values), and
// returns the public error for the chain: that text, with the problems as
// data in its detail (internal/feedback). The client's result carries the
// same public error in _meta[toolctx.ErrorMetaKey], code and detail.
func rephrase(res *mcp.CallToolResult, text string) *errs.Error {
	problems := feedback.MCPGoProblems(text)
	msg := feedback.Message(problems)
	pub := errs.InvalidArguments(msg).WithDetail(feedback.Detail(problems))
	res.Content = []mcp.Content{mcp.NewTextContent(msg)}
	// The client gets the structured feedback the chain's row gets, as a
	// go-sdk client does: a fresh map, since mcp-go's result may share one.
	fields := map[string]any{toolctx.ErrorMetaKey: adapter.ErrorMeta(pub.Public())}
	if res.Meta != nil {
		for k, v := range res.Meta.AdditionalFields {
			if k != toolctx.ErrorMetaKey {
				fields[k] = v
			}
		}
		res.Meta = &mcp.Meta{ProgressToken: res.Meta.ProgressToken, AdditionalFields: fields}
	} else {
		res.Meta = &mcp.Meta{AdditionalFields: fields}
	}
	return pub
}
