package mcpgo_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// benchCall measures in-process tools/call of a small native tool through
// mcp-go's in-process client, on a server built with opts.
//
//	go test -run '^$' -bench . -benchmem -count 10 ./toolctx/mcpgo/
func benchCall(b *testing.B, opts ...server.ServerOption) {
	benchResult(b, func(msg string) *mcp.CallToolResult { return mcp.NewToolResultText(msg) }, opts...)
}

// benchOutput is the result of the structured benchmarks, as a struct.
type benchOutput struct {
	Msg   string   `json:"msg"`
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
}

// benchResult is benchCall with a tool "echo" answering with result(msg);
// the tool declares benchOutput's output schema.
func benchResult(b *testing.B, result func(msg string) *mcp.CallToolResult, opts ...server.ServerOption) {
	s := server.NewMCPServer("bench", "1.0.0", opts...)
	s.AddTool(mcp.NewTool("echo", mcp.WithString("msg"), mcp.WithOutputSchema[benchOutput]()), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		msg, _ := req.GetArguments()["msg"].(string)
		return result(msg), nil
	})
	c, err := client.NewInProcessClient(s)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"msg": "hello"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkToolsCall(b *testing.B) {
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.Run("bare", func(b *testing.B) { benchCall(b) })
	b.Run("mcpgo-recovery+logger", func(b *testing.B) {
		benchCall(b, server.WithRecovery(), server.WithLogger(discard))
	})
	b.Run("toolmw-full", func(b *testing.B) {
		benchCall(b, mcpgo.ServerOption(benchChain().Middleware()))
	})
}

func benchChain() middleware.Chain {
	return middleware.New(
		middleware.After(func(context.Context, middleware.CallInfo) {}),
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
}

// BenchmarkStructuredCall measures what the adapter's checks inside the
// chain cost on structured results: a map of JSON values (checked without
// encoding), a struct (encoded once to check it), and the struct on a server
// that validates outputs (validated by the adapter, then by mcp-go). Each
// is measured bare and behind the toolmw chain.
//
//	go test -run '^$' -bench StructuredCall -benchmem -count 6 ./toolctx/mcpgo/
func BenchmarkStructuredCall(b *testing.B) {
	asMap := func(msg string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(msg)},
			StructuredContent: map[string]any{"msg": msg, "count": 3.0, "tags": []any{"a", "b"}}}
	}
	asStruct := func(msg string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(msg)},
			StructuredContent: benchOutput{Msg: msg, Count: 3, Tags: []string{"a", "b"}}}
	}
	for _, tc := range []struct {
		name     string
		result   func(string) *mcp.CallToolResult
		validate bool
	}{
		{"map", asMap, false},
		{"struct", asStruct, false},
		{"struct-validated", asStruct, true},
	} {
		var base []server.ServerOption
		if tc.validate {
			base = append(base, server.WithOutputSchemaValidation())
		}
		b.Run(tc.name+"/bare", func(b *testing.B) { benchResult(b, tc.result, base...) })
		b.Run(tc.name+"/toolmw-full", func(b *testing.B) {
			benchResult(b, tc.result, append([]server.ServerOption{mcpgo.ServerOption(benchChain().Middleware())}, base...)...)
		})
	}
}

// BenchmarkMiddlewareOnly isolates the per-call cost of each tool
// middleware stack: mcp-go's handler chain applied per call, as
// handleToolCall does, around the same handler, without JSON-RPC.
func BenchmarkMiddlewareOnly(b *testing.B) {
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	handler := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello"), nil
	}
	chain := middleware.New(
		middleware.After(func(context.Context, middleware.CallInfo) {}),
		middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	recovery := func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		// server.WithRecovery's middleware, as mcp-go v1.2.1 writes it.
		return func(ctx context.Context, request mcp.CallToolRequest) (result *mcp.CallToolResult, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = context.Canceled
				}
			}()
			return next(ctx, request)
		}
	}
	stacks := map[string][]server.ToolHandlerMiddleware{
		"bare":                  nil,
		"mcpgo-recovery+logger": {recovery, loggingMiddleware(discard)},
		"toolmw-full":           {mcpgo.Middleware(chain.Middleware())},
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.RawArguments = []byte(`{"msg":"hello"}`)
	ctx := context.Background()
	for _, name := range []string{"bare", "mcpgo-recovery+logger", "toolmw-full"} {
		mws := stacks[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h := server.ToolHandlerFunc(handler)
				for i := len(mws) - 1; i >= 0; i-- {
					h = mws[i](h)
				}
				if _, err := h(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// loggingMiddleware extracts the tool middleware server.WithLogger installs.
func loggingMiddleware(l *slog.Logger) server.ToolHandlerMiddleware {
	// A copy of server.toolLoggingMiddleware (unexported in v1.2.1).
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			start := timeNow()
			res, err := next(ctx, req)
			l.LogAttrs(ctx, slog.LevelInfo, "mcp.tool", slog.String("mcp.tool.name", req.Params.Name),
				slog.Float64("duration_s", timeSince(start).Seconds()), slog.String("outcome", "ok"))
			return res, err
		}
	}
}

var (
	timeNow   = time.Now
	timeSince = time.Since
)
