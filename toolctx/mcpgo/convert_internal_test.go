package mcpgo

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/toolctx"
)

// TestContentFromMCPNilResource: an embedded resource holding a nil
// *mcp.TextResourceContents or *mcp.BlobResourceContents converts as one
// without contents (it used to panic, read through the nil pointer); a nil
// pointer block is dropped, and a pointer resource converts as its value.
func TestContentFromMCPNilResource(t *testing.T) {
	for name, rc := range map[string]mcp.ResourceContents{
		"text": (*mcp.TextResourceContents)(nil),
		"blob": (*mcp.BlobResourceContents)(nil),
		"none": nil,
	} {
		t.Run(name, func(t *testing.T) {
			got := fromMCP(&mcp.CallToolResult{Content: []mcp.Content{mcp.EmbeddedResource{Type: mcp.ContentTypeResource, Resource: rc}}})
			assert.Equal(t, []toolctx.Content{&toolctx.EmbeddedResource{}}, got.Content)
		})
	}
	got := fromMCP(&mcp.CallToolResult{Content: []mcp.Content{
		(*mcp.TextContent)(nil),
		&mcp.EmbeddedResource{Resource: &mcp.BlobResourceContents{URI: "file:///b", Blob: "aGk="}},
	}})
	assert.Equal(t, []toolctx.Content{&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///b", Blob: []byte("hi")}}}, got.Content)
}

// TestFromMCPIntoUsesItsBufferOnce: the first conversion of a call is
// written into the call's memory, and any later one (an interceptor that
// runs the handler again) into its own, so a result the chain holds never
// changes under it.
func TestFromMCPIntoUsesItsBufferOnce(t *testing.T) {
	var buf resultBuf
	first := fromMCPInto(mcp.NewToolResultText("first"), &buf)
	assert.Same(t, &buf.res, first, "the first conversion is the buffer's")
	second := fromMCPInto(mcp.NewToolResultText("second"), &buf)
	assert.NotSame(t, &buf.res, second)
	assert.Equal(t, []toolctx.Content{&toolctx.Text{Text: "first"}}, first.Content, "the first result is as it was")
	assert.Equal(t, []toolctx.Content{&toolctx.Text{Text: "second"}}, second.Content)

	// Through the buffer or not, a conversion is the same.
	for _, r := range []*mcp.CallToolResult{
		mcp.NewToolResultText("t"),
		{Content: []mcp.Content{&mcp.TextContent{Type: mcp.ContentTypeText, Text: "p", Meta: &mcp.Meta{AdditionalFields: map[string]any{"k": "v"}}}}, IsError: true},
		{Content: []mcp.Content{(*mcp.TextContent)(nil)}},
		{Content: []mcp.Content{mcp.NewImageContent("aGk=", "image/png")}},
		mcp.NewToolResultStructured(map[string]any{"a": 1.0}, "a"),
	} {
		var b resultBuf
		assert.Equal(t, fromMCP(r), fromMCPInto(r, &b))
	}
}

// fromMCP is fromMCPInto without a buffer.
func fromMCP(r *mcp.CallToolResult) *toolctx.CallResult { return fromMCPInto(r, nil) }
