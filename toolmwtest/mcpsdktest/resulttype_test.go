package mcpsdktest

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw/toolmwtest"
)

// TestEveryBuiltResultCarriesResultType runs [toolmwtest.Kit.CheckResultType]
// on go-sdk, on the transports that negotiate 2026-07-28: in memory and
// stateless streamable HTTP.
func TestEveryBuiltResultCarriesResultType(t *testing.T) {
	res, err := Kit().CheckResultType(context.Background(), toolmwtest.InMemory, toolmwtest.StatelessHTTP)
	toolmwtest.Report(t, res, err)
}
