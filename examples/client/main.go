package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Call is one tool call of the tour.
type Call struct {
	Tool string
	Args map[string]any
	// Why says which row of the behaviour table the call shows.
	Why string
	// CancelAfter, when set, cancels the call from the client side.
	CancelAfter time.Duration
}

// Tour is the list of calls the client makes: every demo tool, and every
// row of the behaviour table the demo server can show.
var Tour = []Call{
	{Tool: "greet", Args: map[string]any{"name": "Ada"}, Why: "success: typed input and structured output"},
	{Tool: "divide", Args: map[string]any{"a": 1, "b": "two"}, Why: "invalid arguments: the schema's feedback is public"},
	{Tool: "divide", Args: map[string]any{"a": 1, "b": 0}, Why: "a public error from the handler, with detail"},
	{Tool: "lookup_order", Args: map[string]any{"id": 42}, Why: "a public error: its wrapped cause stays on the server"},
	{Tool: "sales_report", Args: map[string]any{"region": "emea"}, Why: "a raw backend error: generic message; the audit row has the cause"},
	{Tool: "crash", Args: map[string]any{"reason": "bug"}, Why: "a panic, recovered: generic message; the server keeps running"},
	{Tool: "greet", Args: map[string]any{"name": "again"}, Why: "the server survived the panic"},
	{Tool: "slow", Args: map[string]any{"seconds": 0.05}, Why: "a slow tool within its deadline"},
	{Tool: "slow", Args: map[string]any{"seconds": 30}, CancelAfter: 300 * time.Millisecond, Why: "cancelled by the client: nothing late is sent"},
	{Tool: "slow", Args: map[string]any{"seconds": 30}, Why: "past the server's deadline: a public timeout"},
	{Tool: "no_such_tool", Args: map[string]any{}, Why: "an unknown tool: a protocol error"},
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:8080/mcp", "the demo server's streamable HTTP `URL`")
	sse := fs.String("sse", "", "connect over HTTP+SSE (protocol 2024-11-05) to this `URL` instead, such as http://127.0.0.1:8080/sse")
	stdio := fs.String("stdio", "", "start this `command` (split at spaces, no shell) and talk to it over stdin/stdout instead, such as 'go run ./examples/server -stdio'")
	timeout := fs.Duration("timeout", time.Minute, "give up on the whole tour after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "client: unexpected argument %q (quote the -stdio command as one argument)\n", fs.Arg(0))
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	n := 0
	for _, name := range []string{"url", "sse", "stdio"} {
		if set[name] {
			n++
		}
	}
	if n > 1 {
		fmt.Fprintln(stderr, "client: pass one of -url, -sse and -stdio")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	var (
		transport mcp.Transport
		target    = *url
	)
	switch {
	case set["stdio"]:
		argv := strings.Fields(*stdio)
		if len(argv) == 0 {
			fmt.Fprintln(stderr, "client: -stdio needs a command, such as 'go run ./examples/server -stdio'")
			return 2
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stderr = stderr
		transport = &mcp.CommandTransport{Command: cmd}
		target = "stdio: " + strings.Join(argv, " ")
	case set["sse"]:
		transport = &mcp.SSEClientTransport{Endpoint: *sse}
		target = *sse
	default:
		transport = &mcp.StreamableClientTransport{Endpoint: *url, MaxRetries: -1, DisableStandaloneSSE: true}
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "toolmw-tour-client", Version: "0.1.0"}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		fmt.Fprintf(stderr, "client: cannot connect to %s: %v (%s)\n", target, err, connectHint(set))
		return 1
	}
	defer func() { _ = cs.Close() }()
	if err := RunTour(ctx, cs, target, stdout); err != nil {
		fmt.Fprintf(stderr, "client: %v\n", err)
		return 1
	}
	return 0
}

// connectHint says what to check when the client cannot connect.
func connectHint(set map[string]bool) string {
	if set["stdio"] {
		return "does the command serve MCP over stdio? the demo needs -stdio"
	}
	return "is `go run ./examples/server` running? pass -url, or -sse for its /sse endpoint"
}

// RunTour lists the tools and makes every call of Tour on cs, printing what
// the client saw; target names the server in the first line.
func RunTour(ctx context.Context, cs *mcp.ClientSession, target string, out io.Writer) error {
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing tools: %w", err)
		}
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	fmt.Fprintf(out, "connected to %s; tools: %s\n", target, strings.Join(names, ", "))
	for _, c := range Tour {
		fmt.Fprintf(out, "\n%s %s\n  (%s)\n", c.Tool, compact(c.Args), c.Why)
		fmt.Fprintf(out, "  -> %s\n", CallAndDescribe(ctx, cs, c))
	}
	return nil
}

// CallAndDescribe makes one call and describes, on one line, what the client
// received.
func CallAndDescribe(ctx context.Context, cs *mcp.ClientSession, c Call) string {
	cctx := ctx
	if c.CancelAfter > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, c.CancelAfter)
		defer cancel()
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Args})
	return Describe(res, err, cctx.Err() != nil && ctx.Err() == nil)
}

// Describe renders a result or an error as the client saw it.
func Describe(res *mcp.CallToolResult, err error, cancelled bool) string {
	if cancelled {
		return "cancelled by the client: no result (" + firstLine(err) + ")"
	}
	if err != nil {
		return "protocol error: " + firstLine(err)
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	if !res.IsError {
		if res.StructuredContent != nil {
			return "ok " + compact(res.StructuredContent)
		}
		return "ok " + fmt.Sprintf("%q", strings.Join(text, " "))
	}
	s := fmt.Sprintf("isError %q", strings.Join(text, " "))
	if m, ok := res.Meta[toolctx.ErrorMetaKey].(map[string]any); ok {
		s += fmt.Sprintf(" code=%v", m["code"])
		if d, ok := m["detail"]; ok && d != nil {
			s += " detail=" + compact(d)
		}
	}
	return s
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func firstLine(err error) string {
	if err == nil {
		return "no error"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
