package mcpgotest

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw/toolmwtest"
)

// TestEveryBuiltResultCarriesResultType runs [toolmwtest.Kit.CheckResultType]
// on mcp-go, in process and on stateless streamable HTTP (mcp-go stamps
// results itself; this holds the adapter to its path).
func TestEveryBuiltResultCarriesResultType(t *testing.T) {
	res, err := Kit().CheckResultType(context.Background(), toolmwtest.InMemory, toolmwtest.StatelessHTTP)
	toolmwtest.Report(t, res, err)
}
