package serve_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/serve"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// A command that serves tool calls: the audit flags, the audit log, the
// recommended chain with a deadline appended, and the HTTP handler.
func Example() {
	dir, _ := os.MkdirTemp("", "serve-example")
	defer os.RemoveAll(dir)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	var ac serve.AuditConfig
	fs := flag.NewFlagSet("mycommand", flag.ContinueOnError)
	serve.AddAuditFlags(fs, &ac)
	if err := fs.Parse([]string{"-audit-db", filepath.Join(dir, "audit.db"), "-audit-durability", "disk"}); err != nil {
		fmt.Println(err)
		return
	}
	al, err := serve.OpenAudit(context.Background(), ac, logger)
	if err != nil {
		fmt.Println(err) // one line, naming the flag to change
		return
	}
	defer al.Close() // last: flushes the rows of the last calls

	server := mcp.NewServer(&mcp.Implementation{Name: "mine", Version: "1"}, nil)
	chain := serve.Chain(al.Emitter(), serve.Diagnostics(logger), logger).Append(middleware.Timeout(30 * time.Second))
	mcpsdk.Install(server, chain.Middleware(), mcpsdk.WithFallbackLogger(logger))

	h, err := serve.Handler(serve.HTTPConfig{Name: "mine", Server: server, Audit: al.Emitter(), Logger: logger,
		SessionIdle: 5 * time.Minute, MaxSessions: 1000, WriteTimeout: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	fmt.Println(al.SQLitePath() != "", rec.Code, rec.Body.String())
	// Output: true 404 mine: the MCP endpoints are /mcp (streamable HTTP) and /sse (HTTP+SSE, 2024-11-05)
}

// OpenAudit's errors are the operator's: one line that names the cause
// once and the setting to change, as the command calls it.
func ExampleOpenAudit() {
	dir, _ := os.MkdirTemp("", "serve-example")
	defer os.RemoveAll(dir)
	ac := serve.AuditConfig{SQLite: filepath.Join(dir, "missing", "audit.db"),
		Settings: serve.AuditSettings{SQLite: "-audit-db or audit.sqlite"}}
	_, err := serve.OpenAudit(context.Background(), ac, slog.New(slog.NewTextHandler(io.Discard, nil)))
	fmt.Println(err != nil)
	// the message reads: cannot open the audit database ".../missing/audit.db": ...
	// (create the directory, or pass -audit-db or audit.sqlite with a file path in one that exists)
	// Output: true
}

// InFlight goes first in the chain; at shutdown, after the grace period,
// Cancel ends the calls still running.
func ExampleInFlight() {
	calls := serve.NewInFlight()
	chain := middleware.New(calls.Track)
	_ = chain
	calls.Cancel()
	fmt.Println(calls.Running())
	// Output: 0
}
