package mcpsdktest

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw/toolmwtest"
)

// TestVisibilityFollowsObserve runs [toolmwtest.Kit.CheckVisibilityObserve]
// on go-sdk, in memory and on stateful and stateless streamable HTTP.
func TestVisibilityFollowsObserve(t *testing.T) {
	res, err := Kit().CheckVisibilityObserve(context.Background(), toolmwtest.InMemory, toolmwtest.StreamableHTTP, toolmwtest.StatelessHTTP)
	toolmwtest.Report(t, res, err)
}
