package mcpgotest

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw/toolmwtest"
)

// TestVisibilityFollowsObserve runs [toolmwtest.Kit.CheckVisibilityObserve]
// on mcp-go, in process and on stateful and stateless streamable HTTP.
func TestVisibilityFollowsObserve(t *testing.T) {
	res, err := Kit().CheckVisibilityObserve(context.Background(), toolmwtest.InMemory, toolmwtest.StreamableHTTP, toolmwtest.StatelessHTTP)
	toolmwtest.Report(t, res, err)
}
