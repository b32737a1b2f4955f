package docs_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/mcpsdktest"
)

// newMyServer stands for your server: your tools and your chain, with the
// kit's Causes in place of your diagnostics hook and audit writer.
func newMyServer(causes *toolmwtest.Causes) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mine"}, nil)
	chain := middleware.New(
		audit.Interceptor(causes.Emitter(audit.Direct(audit.NewSlogSink(slog.NewTextHandler(io.Discard, nil)), audit.DirectConfig{}))),
		middleware.Diagnostics(causes.Diagnostics(nil)),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithFallbackLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	return s
}

// The kit run against the server above: this is the page's example, and a
// real test of this package.

// doc:begin nothingleaks
func TestNothingLeaks(t *testing.T) {
	causes := new(toolmwtest.Causes) // records what diagnostics and the audit log kept
	mcpsdktest.Kit().Run(t, mcpsdktest.Config{
		// Your server: your tools and your chain, with causes.Diagnostics(yourHook)
		// and causes.Emitter(yourAuditWriter) in place of yours.
		NewServer: func() *mcp.Server { return newMyServer(causes) },
		Plan: toolmwtest.Plan{
			Causes:     causes,
			Transports: []toolmwtest.Transport{toolmwtest.InMemory}, // default: InMemory, StreamableHTTP, StatelessHTTP, SSE
		},
	})
}

// doc:end nothingleaks
