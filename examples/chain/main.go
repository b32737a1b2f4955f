package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chain:", err)
		os.Exit(1)
	}
}

// Chain is the chain, outermost first. The order matters:
//   - audit, Diagnostics, Normalize, Recover first, as always: every
//     guard's rejection gets its row and its public envelope;
//   - then the guards, cheapest first, so that a call that will be
//     refused costs little and takes nothing (no token, no slot);
//   - then what shapes the result: MaxResultBytes outside Cache and
//     ScrubSecrets measures what is sent; Cache outside ScrubSecrets keeps
//     results scrubbed;
//   - Retry, then Timeout innermost: each attempt has its own deadline.
func Chain(rows audit.Emitter, out io.Writer) middleware.Chain {
	return middleware.New(
		audit.Interceptor(rows),
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			fmt.Fprintf(out, "   diagnostics: %s: %v\n", ev.Details.Tool(), ev.Cause())
		}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		// Guards: refuse before any work.
		middleware.MaxArgBytes(64),
		middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"purge": {"admin"}}}),
		middleware.When(middleware.Tools("search"),
			middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(30 * time.Second), Burst: 2})),
		middleware.When(middleware.Tools("export"), middleware.Bulkhead(middleware.BulkheadConfig{Limit: 4})),
		// Results: bounded, cached where read-only, scrubbed.
		middleware.MaxResultBytes(1024, middleware.ResultTruncate),
		middleware.When(middleware.Tools("search"), middleware.Cache(middleware.CacheConfig{TTL: time.Minute})),
		middleware.ScrubSecrets(middleware.ScrubConfig{}),
		// Resilience: retry the idempotent fetch, bound the slow export.
		middleware.When(middleware.Tools("fetch"), middleware.Retry(middleware.RetryConfig{InitialBackoff: time.Millisecond})),
		middleware.When(middleware.Tools("export"), middleware.Timeout(time.Second)),
	)
}

type searchIn struct {
	Query string `json:"query"`
}
type searchOut struct {
	Hits []string `json:"hits"`
}
type exportIn struct {
	Rows int `json:"rows"`
}
type exportOut struct {
	Exported int `json:"exported"`
}

func addTools(s *mcp.Server) error {
	search := func(ctx context.Context, req *toolctx.Request, in searchIn) (searchOut, error) {
		return searchOut{Hits: []string{in.Query + " (1)", in.Query + " (2)"}}, nil
	}
	// export hands the rows to a backend that takes a batch of up to
	// 10,000 rows at once; a larger export waits for a bulk job that this
	// demo never finishes (in production, minutes), so only the Timeout
	// ends it. It honours its context. Neither depends on how fast the
	// machine is: no sleep races the deadline.
	export := func(ctx context.Context, req *toolctx.Request, in exportIn) (exportOut, error) {
		if in.Rows <= 10000 {
			return exportOut{Exported: in.Rows}, nil
		}
		<-ctx.Done()
		return exportOut{}, ctx.Err()
	}
	// logs returns more than the result limit, with a credential in it.
	logs := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("retrying with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.demo.sig\n" +
			strings.Repeat("GET /api/items 200 12ms\n", 100))
	})
	// fetch fails once, as an upstream restarting would, then succeeds.
	var fetches atomic.Int32
	fetch := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		if fetches.Add(1) == 1 {
			return toolctx.ErrorResult(errs.Unavailable("the upstream is restarting"))
		}
		return toolctx.TextResult("fetched")
	})
	purge := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("purged")
	})
	obj := json.RawMessage(`{"type":"object"}`)
	return errors.Join(
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "search", Description: "Searches."}, search),
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "export", Description: "Exports rows."}, export),
		mcpsdk.AddTool(s, &mcp.Tool{Name: "logs", Description: "Shows the recent log.", InputSchema: obj}, logs),
		mcpsdk.AddTool(s, &mcp.Tool{Name: "fetch", Description: "Fetches from upstream.", InputSchema: obj}, fetch),
		mcpsdk.AddTool(s, &mcp.Tool{Name: "purge", Description: "Purges everything.", InputSchema: obj}, purge),
	)
}

func run(ctx context.Context, out io.Writer) error {
	server := mcp.NewServer(&mcp.Implementation{Name: "chain-demo"}, nil)
	if err := addTools(server); err != nil {
		return err
	}
	rows := audit.EmitterFunc(func(ctx context.Context, r audit.Record) {
		fmt.Fprintf(out, "   audit row: tool=%s outcome=%s code=%s message=%q", r.Tool, r.Outcome, r.Code, r.Message)
		for _, n := range r.Notes {
			fmt.Fprintf(out, " %s=%s", n.Key, n.Value)
		}
		fmt.Fprintln(out)
	})
	mcpsdk.Install(server, Chain(rows, out).Middleware(), mcpsdk.WithTransport(toolctx.TransportInMemory))

	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "chain-client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"query": strings.Repeat("x", 100)}}, // argument-size guard
		{"search", map[string]any{"query": "gophers"}},
		{"search", map[string]any{"query": "gophers"}}, // the same again: from the cache
		{"search", map[string]any{"query": "badgers"}}, // third in the window: rate limited
		{"purge", map[string]any{}},                    // no identity, and purge needs the admin scope
		{"logs", map[string]any{}},                     // scrubbed, then truncated
		{"fetch", map[string]any{}},                    // unavailable once, retried
		{"export", map[string]any{"rows": 1000}},       // one batch: answered at once
		{"export", map[string]any{"rows": 5000000}},    // a bulk job: past the 1s timeout
	}
	for _, c := range calls {
		args, _ := json.Marshal(c.args)
		if len(args) > 40 {
			args = append(args[:37:37], "..."...)
		}
		fmt.Fprintf(out, "%s %s\n", c.tool, args)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		fmt.Fprintf(out, "   client got: %s\n", describe(res, err))
	}
	return nil
}

func describe(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "protocol error: " + err.Error()
	}
	var text string
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			text = t.Text
		}
	}
	if !res.IsError {
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			return "ok " + string(b)
		}
		if len(text) > 100 {
			text = text[:48] + " ... " + text[len(text)-46:]
		}
		return fmt.Sprintf("ok %q", text)
	}
	b, _ := json.Marshal(res.Meta[toolctx.ErrorMetaKey])
	return fmt.Sprintf("isError %q %s", text, b)
}
