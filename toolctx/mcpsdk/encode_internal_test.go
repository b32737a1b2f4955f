package mcpsdk

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
)

// TestCheckBlockAllocatesNothing: checkBlock runs on every block of every
// result.
func TestCheckBlockAllocatesNothing(t *testing.T) {
	cs := []mcp.Content{&mcp.TextContent{Text: "x"}, &mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"},
		&mcp.ResourceLink{URI: "file:///a", Name: "a"}, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Text: "x"}}}
	allocs := testing.AllocsPerRun(100, func() {
		for _, c := range cs {
			if err := checkBlock(c); err != nil {
				t.Fatal(err)
			}
		}
	})
	assert.Zero(t, allocs, "allocations per check of %d blocks", len(cs))
}
