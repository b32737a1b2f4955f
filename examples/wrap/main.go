package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wrap:", err)
		os.Exit(1)
	}
}

// ---- The existing server: plain go-sdk code, not changed by toolmw. ----

type ForecastIn struct {
	City string `json:"city" jsonschema:"the city"`
}

type ForecastOut struct {
	City    string  `json:"city"`
	Celsius float64 `json:"celsius"`
}

// UpstreamURL is what the weather backend's errors carry: a URL with an API
// key in it.
const UpstreamURL = "https://api.weather.example/v3?key=wx-live-7f3a9c"

func forecast(ctx context.Context, req *mcp.CallToolRequest, in ForecastIn) (*mcp.CallToolResult, ForecastOut, error) {
	switch in.City {
	case "Atlantis":
		return nil, ForecastOut{}, fmt.Errorf("GET %s&q=%s: 502 Bad Gateway", UpstreamURL, in.City)
	case "":
		var units map[string]string
		//lint:ignore SA5000 the nil-map write is the deliberate panic under test
		units["c"] = "celsius" // a bug: assignment to entry in nil map
	}
	return nil, ForecastOut{City: in.City, Celsius: 21.5}, nil
}

// NewExistingServer is the server as it was before toolmw.
func NewExistingServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "forecast", Description: "Tomorrow's forecast for a city."}, forecast)
	return s
}

// ---- Wrapping it. ----

// Wrap installs the chain on s: audit rows to rows, raw causes to diag.
func Wrap(s *mcp.Server, rows audit.Emitter, diag middleware.DiagnosticsFunc) {
	chain := middleware.New(
		audit.Interceptor(rows),
		middleware.Diagnostics(diag),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportInMemory))
}

func run(ctx context.Context, out io.Writer) error {
	calls := []map[string]any{{"city": "Paris"}, {"city": "Atlantis"}, {"city": 7}, {"city": ""}}

	fmt.Fprintln(out, "== the existing server, as it is ==")
	// Without toolmw the go-sdk does not recover panics: the last call
	// would kill this process, so it is left out here.
	if err := callAll(ctx, out, NewExistingServer(), calls[:3]); err != nil {
		return err
	}

	fmt.Fprintln(out, "\n== the same server after mcpsdk.Install ==")
	s := NewExistingServer()
	Wrap(s,
		audit.EmitterFunc(func(ctx context.Context, r audit.Record) {
			fmt.Fprintf(out, "   audit row: outcome=%s code=%s message=%q\n", r.Outcome, r.Code, r.Message)
		}),
		func(ctx context.Context, ev middleware.DiagnosticEvent) {
			fmt.Fprintf(out, "   diagnostics: %v\n", ev.Cause())
		})
	return callAll(ctx, out, s, calls)
}

func callAll(ctx context.Context, out io.Writer, s *mcp.Server, calls []map[string]any) error {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wrap-client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer func() { _ = cs.Close(); _ = ss.Wait() }()
	for _, args := range calls {
		b, _ := json.Marshal(args)
		fmt.Fprintf(out, "forecast %s\n", b)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: args})
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
	s := fmt.Sprintf("isError %q", text)
	if m, ok := res.Meta[toolctx.ErrorMetaKey]; ok {
		b, _ := json.Marshal(m)
		s += " " + string(b)
	}
	return s
}
