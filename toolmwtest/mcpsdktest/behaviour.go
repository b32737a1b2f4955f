package mcpsdktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolmwtest"
)

// The tools [CheckBehaviour] registers, one per row of the behaviour table.
const (
	rowInvalid     = "toolmwtest_row_invalid_arguments"
	rowPublic      = "toolmwtest_row_public_error"
	rowOwnIsError  = "toolmwtest_row_own_iserror"
	rowRaw         = "toolmwtest_row_raw_error"
	rowPanic       = "toolmwtest_row_panic"
	rowUnencodable = "toolmwtest_row_unencodable_output"
	rowUnknown     = "toolmwtest_row_no_such_tool"
)

// BehaviourConfig says what [CheckBehaviour] checks.
type BehaviourConfig struct {
	// NewServer returns the server under test, with its chain; the check
	// adds a tool for each row of the table, natively registered.
	NewServer func() *mcp.Server
	// Causes, if set, is wired into the chain's diagnostics and audit log;
	// then the server side of each row is checked too.
	Causes *toolmwtest.Causes
	// CallTimeout bounds each call. Default 10s.
	CallTimeout time.Duration
}

// CheckBehaviour asserts the rows of toolmw's behaviour table (the README's
// "What the caller sees, what the server keeps") on a server, over the
// in-memory transport: an unknown tool is a protocol error; invalid
// arguments get useful feedback; an explicit public error shows its message
// and never its cause; a handler's own isError result is shown as it is; a
// raw error, a panic and an output that cannot be encoded all get the same
// generic isError result, the server keeps running, and (with Causes)
// diagnostics and the row get the raw text while public rows get no
// diagnostics event. Each broken row is a problem of the result.
func CheckBehaviour(ctx context.Context, cfg BehaviourConfig) (*toolmwtest.Result, error) {
	if cfg.NewServer == nil {
		return nil, errors.New("mcpsdktest: BehaviourConfig.NewServer is nil")
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 10 * time.Second
	}
	secret := toolmwtest.Generate(time.Now().UnixNano(), 1)[0].Canary
	s := cfg.NewServer()
	addRowTools(s, secret)
	conn, err := connect(ctx, Config{NewServer: func() *mcp.Server { return s }}, nil, InMemory)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	b := &behaviour{res: new(toolmwtest.Result), conn: conn, secret: secret, timeout: cfg.CallTimeout, causes: cfg.Causes}
	b.check(ctx)
	return b.res, nil
}

type behaviour struct {
	res     *toolmwtest.Result
	conn    toolmwtest.Conn
	secret  string
	timeout time.Duration
	causes  *toolmwtest.Causes
}

// outcome is what the client got for one call.
type outcome struct {
	protocolErr error
	isError     bool
	text        string
	structured  bool
	received    []byte
}

func (b *behaviour) call(ctx context.Context, tool string, args map[string]any) outcome {
	from := b.conn.Received.Len()
	cctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	var o outcome
	o.protocolErr = b.conn.CallTool(cctx, tool, args)
	o.received = b.conn.Received.Since(from)
	b.res.Calls++
	// The last JSON-RPC response in what was received is this call's.
	lines := strings.Split(strings.TrimSpace(string(o.received)), "\n")
	var msg struct {
		Result *struct {
			IsError           bool            `json:"isError"`
			RawContent        json.RawMessage `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if json.Unmarshal([]byte(lines[i]), &msg) == nil && msg.Result != nil {
			break
		}
	}
	if r := msg.Result; r != nil {
		o.isError = r.IsError
		o.structured = len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null"
		var content []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(r.RawContent, &content)
		for _, c := range content {
			o.text += c.Text
		}
	}
	return o
}

func (b *behaviour) fail(row, format string, args ...any) {
	b.res.Problems = append(b.res.Problems, toolmwtest.Problem{Transport: InMemory.String(), Tool: row, Shape: "behaviour table", Issue: fmt.Sprintf(format, args...)})
}

func (b *behaviour) noSecret(row string, o outcome) {
	if strings.Contains(string(o.received), b.secret) {
		b.fail(row, "the raw cause reached the client: %s", toolmwtest.Scan(o.received, []string{b.secret})[0].Context)
	}
}

func (b *behaviour) check(ctx context.Context) {
	raw := b.call(ctx, rowRaw, nil)
	generic := raw.text
	switch {
	case raw.protocolErr != nil:
		b.fail(rowRaw, "a raw handler error must be an isError result with a generic message, got a protocol error: %v", raw.protocolErr)
	case !raw.isError || generic == "":
		b.fail(rowRaw, "a raw handler error must be an isError result with a generic message, got isError=%v %q", raw.isError, raw.text)
	case raw.structured:
		b.fail(rowRaw, "a raw handler error's result must carry no structured content")
	}
	b.noSecret(rowRaw, raw)

	for _, row := range []string{rowPanic, rowUnencodable} {
		o := b.call(ctx, row, nil)
		if o.protocolErr != nil || !o.isError || o.text != generic {
			b.fail(row, "must get the same generic isError result as a raw error (%q), got isError=%v %q (protocol error: %v)", generic, o.isError, o.text, o.protocolErr)
		}
		b.noSecret(row, o)
	}
	if after := b.call(ctx, rowRaw, nil); after.protocolErr != nil || after.text != generic {
		b.fail(rowPanic, "the server must keep running after a panic; the next call got %q (%v)", after.text, after.protocolErr)
	}

	inv := b.call(ctx, rowInvalid, map[string]any{"count": "seven"})
	if inv.protocolErr != nil || !inv.isError || inv.text == generic || !strings.Contains(inv.text, "count") {
		b.fail(rowInvalid, "invalid arguments must get public feedback that names the argument, got isError=%v %q (protocol error: %v)", inv.isError, inv.text, inv.protocolErr)
	}

	pub := b.call(ctx, rowPublic, nil)
	if pub.protocolErr != nil || !pub.isError || !strings.Contains(pub.text, "no such order") {
		b.fail(rowPublic, "an explicit public error must show its public message, got isError=%v %q (protocol error: %v)", pub.isError, pub.text, pub.protocolErr)
	}
	b.noSecret(rowPublic, pub)

	own := b.call(ctx, rowOwnIsError, nil)
	if own.protocolErr != nil || !own.isError || own.text != "the order is locked" {
		b.fail(rowOwnIsError, "a handler's own isError result must be shown as it is, got isError=%v %q (protocol error: %v)", own.isError, own.text, own.protocolErr)
	}

	if unk := b.call(ctx, rowUnknown, nil); unk.protocolErr == nil {
		b.fail(rowUnknown, "an unknown tool must be a protocol error, got isError=%v %q", unk.isError, unk.text)
	}

	if c := b.causes; c != nil {
		if !c.SawDiagnostic(b.secret) {
			b.fail(rowRaw, "diagnostics must get the raw error, the panic and the encoding failure: the raw text reached no diagnostics event")
		}
		if !c.SawRow(b.secret) {
			b.fail(rowRaw, "the audit row must record the raw message where the caller's was scrubbed: no row has it")
		}
		if c.SawDiagnostic("no such order") || c.SawDiagnostic("the order is locked") {
			b.fail(rowPublic, "explicit public errors are expected rejections: diagnostics must not be called for them")
		}
		if !c.SawRow("no such order") {
			b.fail(rowPublic, "the audit row of an explicit public error must record its public message")
		}
	}
}

// unencodableRow is structured content whose encoding fails with the secret.
type unencodableRow struct{ secret string }

func (u unencodableRow) MarshalJSON() ([]byte, error) {
	return nil, errors.New("cannot encode " + u.secret)
}

func addRowTools(s *mcp.Server, secret string) {
	obj := json.RawMessage(`{"type":"object"}`)
	raw := func(name string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: "toolmwtest: a row of the behaviour table", InputSchema: obj}, h)
	}
	raw(rowRaw, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("query orders: dial %s: connection refused", secret)
	})
	raw(rowPanic, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("unreachable backend " + secret)
	})
	raw(rowUnencodable, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: unencodableRow{secret}}, nil
	})
	raw(rowPublic, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errs.NotFound("no such order").WithDetail(map[string]any{"id": 7}).WithCause(errors.New(secret))
	})
	raw(rowOwnIsError, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the order is locked"}}}, nil
	})
	type countIn struct {
		Count int `json:"count"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: rowInvalid, Description: "toolmwtest: takes a count"},
		func(context.Context, *mcp.CallToolRequest, countIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
		})
}
