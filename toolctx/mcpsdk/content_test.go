package mcpsdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/contentschema"
)

// unreadableResults are native results whose content blocks go-sdk
// encodes into what the protocol's schema does not allow in a tool result
// (or cannot encode), each with what the row's cause must say.
var unreadableResults = []struct {
	name    string
	content mcp.Content
	why     string
}{
	{"nil_block", nil, "content[0]: the block is nil"},
	{"nil_pointer_block", (*mcp.TextContent)(nil), "content[0]: the block is nil"},
	{"link_without_uri", &mcp.ResourceLink{Name: "n"}, "a resource link needs its uri and its name"},
	{"link_without_name", &mcp.ResourceLink{URI: "file:///a"}, "a resource link needs its uri and its name"},
	{"resource_without_contents", &mcp.EmbeddedResource{}, "an embedded resource needs its resource"},
	{"resource_without_uri", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{Text: "x"}}, "an embedded resource needs its uri"},
	//lint:ignore SA1019 sampling content is deprecated (SEP-2577): a tool result must not carry it
	{"tool_use", &mcp.ToolUseContent{ID: "1", Name: "f", Input: map[string]any{}}, "sampling content, which a tool result cannot carry"},
}

// addUnreadable adds a native tool unreadable_<name> per unreadableResults,
// and empty_text_resource.
func addUnreadable(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "empty_text_resource", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a"}}}}, nil
		})
	for _, u := range unreadableResults {
		s.AddTool(&mcp.Tool{Name: "unreadable_" + u.name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{u.content}}, nil
			})
	}
}

// TestUnreadableContentWithoutToolmw shows the shapes are real: go-sdk
// either cannot encode the result or encodes what the protocol's schema
// does not allow (internal/contentschema).
func TestUnreadableContentWithoutToolmw(t *testing.T) {
	for _, u := range unreadableResults {
		b, err := marshalRecovered(&mcp.CallToolResult{Content: []mcp.Content{u.content}})
		if err != nil {
			continue // go-sdk cannot send it at all (its encoding fails or panics)
		}
		assert.Error(t, contentschema.CheckResult(b), "%s: %s is not a tool result's content", u.name, b)
	}
}

// TestUnreadableContent: behind toolmw, a native tool's result that the
// protocol does not allow ends as the generic internal failure on every
// transport, and the row says which block and why, instead of recording a
// success the client could not read.
func TestUnreadableContent(t *testing.T) {
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			f := tk.connect(t)
			for i, u := range unreadableResults {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				res, err := f.call(t, ctx, "unreadable_"+u.name, map[string]any{}, 900+i)
				cancel()
				require.NoError(t, err, u.name)
				assert.True(t, res.IsError, u.name)
				assert.Equal(t, errs.GenericMessage, text(res), u.name)
				b, err := json.Marshal(res)
				require.NoError(t, err)
				assert.NoError(t, contentschema.CheckResult(b), "%s: the answer is what the schema allows", u.name)
				recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", 900+i)) == 1 })
				row := forCase(recs, "after", 900+i)[0]
				assert.True(t, row.Failed, "%s: the row records a failure", u.name)
				assert.Contains(t, row.Raw, u.why, "%s: the row says why", u.name)
			}
		})
	}
}

// marshalRecovered is json.Marshal with a panic returned as an error.
func marshalRecovered(v any) (b []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("encoding panicked: %v", p)
		}
	}()
	return json.Marshal(v)
}

// TestEmptyTextResource: go-sdk leaves an empty text out of an embedded
// resource (omitempty), where the protocol's schema requires it; the
// adapter sends it, so the answer is what the schema allows and reads back
// as the tool returned it.
func TestEmptyTextResource(t *testing.T) {
	b, err := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a"}}}})
	require.NoError(t, err)
	require.Error(t, contentschema.CheckResult(b), "without toolmw: %s", b)
	for _, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			f := tk.connect(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := f.call(t, ctx, "empty_text_resource", map[string]any{}, 950)
			require.NoError(t, err)
			require.False(t, res.IsError, "the call succeeds")
			require.Len(t, res.Content, 1)
			er, ok := res.Content[0].(*mcp.EmbeddedResource)
			require.True(t, ok, "an embedded resource: %T", res.Content[0])
			assert.Equal(t, "file:///a", er.Resource.URI)
			assert.Empty(t, er.Resource.Text)
			raw := f.received.bytes()
			assert.Contains(t, string(raw), `"text":""`, "the empty text is sent")
		})
	}
}
