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
