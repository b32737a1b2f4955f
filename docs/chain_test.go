package docs_test

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/justinas/alice"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

type greetIn struct {
	Name string `json:"name"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func greet(ctx context.Context, req *toolctx.Request, in greetIn) (greetOut, error) {
	return greetOut{Greeting: "Hello, " + in.Name + "."}, nil
}

// The recommended chain (docs/chain.md).
func Example_recommendedChain() {
	run := func(ctx context.Context) error {
		// doc:begin recommended
		store, err := sqlstore.OpenSQLite(ctx, "toolmw-audit.db", sqlstore.Config{})
		if err != nil {
			return err
		}
		spool, err := audit.OpenSpool("toolmw-audit.spool", audit.SpoolConfig{}) // local disk, 256 MiB at most
		if err != nil {
			return err
		}
		w := audit.NewAsync(store, audit.AsyncConfig{Spool: spool}) // a call never waits on the store
		defer store.Close()
		defer w.Close(ctx) // runs first: flushes into the store; what it cannot write stays in the spool

		chain := middleware.New(
			audit.Interceptor(w), // outermost: sees panics, timeouts and guards' rejections
			middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
				slog.ErrorContext(ctx, "tool call failed", "err", errs.Describe(ev.Cause()), "call", ev.Details, "code", ev.Code)
			}),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
			middleware.When(middleware.Tools("slow"), middleware.Timeout(2*time.Second)), // one tool only
		)
		server := mcp.NewServer(&mcp.Implementation{Name: "demo"}, nil)
		if err := mcpsdk.AddTypedTool(server, &mcp.Tool{Name: "greet"}, greet); err != nil { // schemas inferred
			return err
		}
		mcpsdk.Install(server, chain.Middleware())
		// doc:end recommended
		return server.Run(ctx, &mcp.StdioTransport{})
	}
	_ = run
}

// The HTTP side, composed with alice (docs/serving.md).
func Example_httpStack() {
	var (
		w      audit.Emitter
		diag   middleware.DiagnosticsFunc
		server *mcp.Server
	)
	getServer := func(*http.Request) *mcp.Server { return server }
	// doc:begin httpstack
	h := alice.New(
		httpmw.Recover(httpmw.WithDiagnostics(diag)), // a panic outside any tool call: a generic 500
		httpmw.RequestID, // X-Request-Id, into the context and the rows
		audit.HTTP(w),    // one row per HTTP request
		httpmw.MaxBodyBytes(1<<20),
	).Then(audit.CaptureHTTP(mcp.NewStreamableHTTPHandler(getServer, nil)))
	// doc:end httpstack
	_ = h
}

// doc:begin tenant
func RequireTenant(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		tenant, _ := req.Meta["tenant"].(string) // untrusted: check it
		if tenant == "" {
			return toolctx.ErrorResult(errs.InvalidArguments("a tenant is required").
				WithDetail(map[string]any{"meta_key": "tenant"}))
		}
		return next.CallTool(ctx, req).WithNote("tenant", tenant)
	})
}

// doc:end tenant

// An interceptor of your own in a chain (docs/chain.md).
func Example_requireTenant() {
	_ = middleware.New(RequireTenant, middleware.Recover)
}

const rows = 1000

// doc:begin progress
func export(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	for i := 1; i <= rows; i++ {
		// ... export row i ...
		_ = toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i), Total: rows, Message: "exporting"})
	}
	_ = toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogNotice, Logger: "export", Data: "done"})
	return toolctx.TextResult("exported")
}

// doc:end progress

// Progress and a deadline that progress moves (docs/chain.md).
func Example_progressTimeout() {
	// doc:begin progresstimeout
	deadline := middleware.When(middleware.Tools("export"), middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{
		Idle: 10 * time.Second, // no progress report for 10 s: timeout
		Max:  5 * time.Minute,  // never longer than this, however much progress
	}))
	// doc:end progresstimeout
	_, _ = middleware.New(deadline).Then(toolctx.HandlerFunc(export))
}
