// Command chain composes a custom toolmw chain: interceptors of your own (an
// argument-size guard and a rate limiter, each answering with a public
// errs.Error), per-tool selection with middleware.When and middleware.Tools,
// and a timeout for one tool only. It runs a go-sdk server and client
// in memory and prints what each call returned, next to the audit row the
// server kept.
//
//	go run ./examples/chain
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// MaxArgBytes is an interceptor of your own: it rejects calls whose
// arguments are larger than n bytes before any handler runs. The rejection
// is an explicit public error, so the client sees its message and detail.
func MaxArgBytes(n int) toolctx.Middleware {
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if len(req.Arguments) > n {
				return toolctx.ErrorResult(errs.InvalidArguments("the arguments are too large").
					WithDetail(map[string]any{"max_bytes": n, "got_bytes": len(req.Arguments)}))
			}
			return next.CallTool(ctx, req)
		})
	}
}

// RateLimit is another: at most n calls per tool in each window.
func RateLimit(n int, window time.Duration) toolctx.Middleware {
	var (
		mu    sync.Mutex
		start = map[string]time.Time{}
		count = map[string]int{}
	)
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			mu.Lock()
			now := time.Now()
			if now.Sub(start[req.Tool]) > window {
				start[req.Tool], count[req.Tool] = now, 0
			}
			count[req.Tool]++
			over := count[req.Tool] > n
			mu.Unlock()
			if over {
				return toolctx.ErrorResult(errs.RateLimited("too many calls to " + req.Tool + "; try again later").
					WithDetail(map[string]any{"limit": n, "window": window.String()}))
			}
			return next.CallTool(ctx, req)
		})
	}
}

// Chain is the custom chain, outermost first.
func Chain(rows audit.Emitter, out io.Writer) middleware.Chain {
	return middleware.New(
		audit.Interceptor(rows), // outermost: the guards' rejections get rows too
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			fmt.Fprintf(out, "   diagnostics: %s: %v\n", ev.Details.Tool(), ev.Cause())
		}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		MaxArgBytes(64), // every tool
		middleware.When(middleware.Tools("search"), RateLimit(2, time.Minute)), // search only
		middleware.When(middleware.Tools("export"), middleware.Timeout(100*time.Millisecond)),
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
	// export takes a millisecond per 1,000 rows and honours its context.
	export := func(ctx context.Context, req *toolctx.Request, in exportIn) (exportOut, error) {
		select {
		case <-time.After(time.Duration(in.Rows) * time.Microsecond):
			return exportOut{Exported: in.Rows}, nil
		case <-ctx.Done():
			return exportOut{}, ctx.Err()
		}
	}
	return errors.Join(
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "search", Description: "Searches."}, search),
		mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "export", Description: "Exports rows."}, export),
	)
}

func run(ctx context.Context, out io.Writer) error {
	server := mcp.NewServer(&mcp.Implementation{Name: "chain-demo"}, nil)
	if err := addTools(server); err != nil {
		return err
	}
	rows := audit.EmitterFunc(func(ctx context.Context, r audit.Record) {
		fmt.Fprintf(out, "   audit row: tool=%s outcome=%s code=%s message=%q\n", r.Tool, r.Outcome, r.Code, r.Message)
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
		{"search", map[string]any{"query": "otters"}},
		{"search", map[string]any{"query": "badgers"}}, // third in the window: rate limited
		{"export", map[string]any{"rows": 1000}},       // 1ms: within the timeout
		{"export", map[string]any{"rows": 5000000}},    // 5s: past the 100ms timeout
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
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		return "ok " + string(b)
	}
	var text string
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			text = t.Text
		}
	}
	b, _ := json.Marshal(res.Meta[toolctx.ErrorMetaKey])
	return fmt.Sprintf("isError %q %s", text, b)
}
