package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// The recommended wiring: a SQLite file, an async writer in front of it,
// and the audit interceptor outermost in the chain.
func Example() {
	dir, _ := os.MkdirTemp("", "toolmw-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	store, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "audit.db"), sqlstore.Config{})
	if err != nil {
		log.Fatal(err) // names the problem: missing directory, read-only, newer schema...
	}
	defer store.Close()
	spool, err := audit.OpenSpool(filepath.Join(dir, "audit.spool"), audit.SpoolConfig{})
	if err != nil {
		log.Fatal(err)
	}
	w := audit.NewAsync(store, audit.AsyncConfig{Spool: spool}) // a call never waits on the database

	chain := middleware.New(
		audit.Interceptor(w),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	lookup, _ := chain.ThenFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		if string(req.Arguments.JSON()) == `{"id":"404"}` {
			return toolctx.ErrorResult(errs.NotFound("no such invoice"))
		}
		return toolctx.ErrorResult(errors.New("open /srv/invoices/2026.csv: permission denied"))
	})
	for _, args := range []string{`{"id":"404"}`, `{"id":"7"}`} {
		res := lookup.CallTool(ctx, &toolctx.Request{Tool: "lookup", CallID: adapter.NewCallID(), Arguments: toolctx.RawArguments([]byte(args))})
		fmt.Println("client:", res.Error.Message)
	}
	if err := w.Close(ctx); err != nil { // flush before reading
		log.Fatal(err)
	}

	rows, _ := store.Query(ctx, sqlstore.Query{Tool: "lookup"})
	for _, r := range rows {
		fmt.Println("audit:", r.Outcome, r.Code, r.Message)
	}
	// Output:
	// client: no such invoice
	// client: internal error: the tool failed; the cause was recorded on the server
	// audit: error internal open /srv/invoices/2026.csv: permission denied
	// audit: error not_found no such invoice
}

// Why did this tool fail? The internal failures of one tool in the last
// hour, newest first.
func ExampleStore_Query() {
	dir, _ := os.MkdirTemp("", "toolmw-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "audit.db"), sqlstore.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	now := time.Now()
	_ = store.WriteBatch(ctx, []audit.Record{
		{Time: now.Add(-2 * time.Hour), Kind: audit.KindTool, Tool: "export", Outcome: audit.OutcomeError, Code: errs.CodeInternal, Message: "old failure"},
		{Time: now.Add(-30 * time.Minute), Kind: audit.KindTool, Tool: "export", Outcome: audit.OutcomeError, Code: errs.CodeInternal, Message: "disk quota exceeded on /exports"},
		{Time: now.Add(-20 * time.Minute), Kind: audit.KindTool, Tool: "export", Outcome: audit.OutcomeOK},
		{Time: now.Add(-10 * time.Minute), Kind: audit.KindTool, Tool: "export", Outcome: audit.OutcomePanic, Code: errs.CodeInternal, Message: "panic: runtime error: index out of range [3] with length 3"},
	})

	rows, err := store.Query(ctx, sqlstore.Query{
		Since: now.Add(-time.Hour),
		Tool:  "export",
		Code:  errs.CodeInternal,
		Limit: 20,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("%s %s: %s\n", r.Outcome, r.Code, r.Message)
	}
	// Output:
	// panic internal: panic: runtime error: index out of range [3] with length 3
	// error internal: disk quota exceeded on /exports
}
