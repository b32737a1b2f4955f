package mcpgo

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
)

// TestCheckContentAllocates nothing: it runs on every result, and a
// block's value boxed in an interface would be an allocation a call.
func TestCheckContentAllocatesNothing(t *testing.T) {
	text := mcp.NewTextContent("x")
	link := mcp.NewResourceLink("file:///a", "a", "", "")
	res := mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///a", Text: "x"})
	cs := []mcp.Content{text, &text, mcp.NewImageContent("aGk=", "image/png"), link, &link, res, &res}
	allocs := testing.AllocsPerRun(100, func() {
		if err := checkContent(cs); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "allocations per check of %d blocks", len(cs))
}
