package mcpgo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/contentschema"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// unreadableResults are native results whose content blocks mcp-go sends
// as they are set and no client can read (mcp-go's own client refuses the
// whole result), each with what the row's cause must say.
var unreadableResults = []struct {
	name    string
	content mcp.Content
	why     string
}{
	{"nil_block", nil, "content[0]: the block is nil"},
	{"nil_pointer_block", (*mcp.TextContent)(nil), "content[0]: the block is nil"},
	{"text_without_type", mcp.TextContent{Text: "x"}, `type field is "", not "text"`},
	{"text_typed_image", &mcp.TextContent{Type: mcp.ContentTypeImage, Text: "x"}, `type field is "image", not "text"`},
	{"audio_typed_text", mcp.AudioContent{Type: mcp.ContentTypeText, Data: "aGk=", MIMEType: "audio/wav"}, `type field is "text", not "audio"`},
	{"link_without_uri", mcp.NewResourceLink("", "name", "", ""), "a resource link needs its uri"},
	{"resource_without_contents", mcp.EmbeddedResource{Type: mcp.ContentTypeResource}, "an embedded resource needs its resource"},
	{"resource_nil_contents", mcp.NewEmbeddedResource((*mcp.BlobResourceContents)(nil)), "an embedded resource needs its resource"},
	{"resource_without_uri", mcp.NewEmbeddedResource(mcp.TextResourceContents{Text: "x"}), "an embedded resource needs its uri"},
	{"tool_use", mcp.NewToolUseContent("1", "f", map[string]any{}), "sampling content, which a tool result cannot carry"},
}

func unreadableServer(opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("unreadable", "1.0.0", opts...)
	for _, u := range unreadableResults {
		s.AddTool(mcp.NewTool(u.name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{u.content}}, nil
		})
	}
	return s
}

// TestUnreadableContentWithoutToolmw shows the shapes are real: each
// result, encoded as mcp-go sends it, is not what the protocol's schema
// allows (internal/contentschema), and mcp-go does not say so.
func TestUnreadableContentWithoutToolmw(t *testing.T) {
	for _, u := range unreadableResults {
		b, err := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{u.content}})
		require.NoError(t, err, "%s: mcp-go encodes it", u.name)
		assert.Error(t, contentschema.CheckResult(b), "%s: %s is not a tool result's content", u.name, b)
	}
}

// TestUnreadableContent: behind toolmw, a native tool's result that no
// client could read ends as the generic internal failure on every mcp-go
// transport, and the row says which block and why, instead of recording
// a success the client never got.
func TestUnreadableContent(t *testing.T) {
	rec := &recorder{}
	for _, w := range allWires(t, func(t *testing.T) *server.MCPServer {
		return unreadableServer(mcpgo.ServerOption(rec.chain().Middleware()))
	}) {
		for _, u := range unreadableResults {
			rec.reset()
			res, err := call(t, w, u.name, nil)
			require.NoError(t, err, "%s %s: the client reads the answer", w.name, u.name)
			assert.True(t, res.IsError, "%s %s", w.name, u.name)
			assert.Equal(t, errs.GenericMessage, text(res), "%s %s", w.name, u.name)
			b, err := json.Marshal(res)
			require.NoError(t, err)
			assert.NoError(t, contentschema.CheckResult(b), "%s %s: the answer is what the schema allows", w.name, u.name)
			_, rows, _ := rec.snapshot()
			require.Len(t, rows, 1, "%s %s: one row", w.name, u.name)
			assert.True(t, rows[0].Outcome.Failed, "%s %s: the row records a failure", w.name, u.name)
			require.Error(t, rows[0].Cause(), "%s %s", w.name, u.name)
			assert.Contains(t, rows[0].Cause().Error(), u.why, "%s %s: the row says why", w.name, u.name)
		}
	}
}
