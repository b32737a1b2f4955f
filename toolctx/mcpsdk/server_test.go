package mcpsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// canary marks every secret the server holds; no byte the client receives
// may contain it.
const canary = "CANARY-7f3a"

func secretFor(id int) string {
	return fmt.Sprintf("%s-%d postgres://admin:hunter2@db.internal/prod", canary, id)
}

// record is what a hook saw: a diagnostics event or an After row.
type record struct {
	Kind      string `json:"kind"` // "diag" or "after"
	Tool      string `json:"tool"`
	Case      int    `json:"case"` // the client's _meta "case", or -1
	Code      string `json:"code"`
	Failed    bool   `json:"failed"`
	Scrubbed  bool   `json:"scrubbed"`
	Raw       string `json:"raw"` // diag: the raw error; after: the raw message when scrubbed
	Stack     bool   `json:"stack"`
	Transport string `json:"transport"`
	Session   string `json:"session"`
	Subject   string `json:"subject"`
}

// recorder collects records, in memory or (in the stdio server process)
// as JSON lines in a file.
type recorder struct {
	mu      sync.Mutex
	recs    []record
	file    *os.File
	changes chan struct{} // closed at the next add (in memory)
}

// changed returns a channel closed when the next record is added.
func (r *recorder) changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changes == nil {
		r.changes = make(chan struct{})
	}
	return r.changes
}

func (r *recorder) add(rec record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file != nil {
		b, _ := json.Marshal(rec)
		_, _ = r.file.Write(append(b, '\n'))
		return
	}
	r.recs = append(r.recs, rec)
	if r.changes != nil {
		close(r.changes)
		r.changes = nil
	}
}

func (r *recorder) snapshot() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.recs...)
}

func caseOf(d toolctx.Details) int {
	if v, ok := d.Meta()["case"].(float64); ok {
		return int(v)
	}
	return -1
}

// chain is the full toolmw chain the tests and benchmarks install.
func chain(rec *recorder) toolctx.Middleware {
	after := func(ctx context.Context, info middleware.CallInfo) {
		r := record{Kind: "after", Tool: info.Details.Tool(), Case: caseOf(info.Details), Code: string(info.Outcome.Public.Code),
			Failed: info.Outcome.Failed, Scrubbed: info.Outcome.Scrubbed, Transport: string(info.Details.Transport()),
			Session: info.Details.SessionID(), Subject: info.Details.Subject()}
		if info.Outcome.Scrubbed {
			r.Raw = info.Cause().Error()
		}
		rec.add(r)
	}
	diag := func(ctx context.Context, ev middleware.DiagnosticEvent) {
		rec.add(record{Kind: "diag", Tool: ev.Details.Tool(), Case: caseOf(ev.Details), Code: string(ev.Code),
			Failed: true, Scrubbed: true, Raw: ev.Cause().Error(), Stack: errs.PanicOf(ev.Cause()) != nil})
	}
	// guard stands for an interceptor that fails on its own, with a raw
	// error, without calling the handler.
	guard := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if req.Tool == "guard_fail" {
				var in failArgs
				_ = json.Unmarshal(req.Arguments.JSON(), &in)
				doGoexit(in.Shape)
				if r := hostileResult(in.Shape, secretFor(in.ID)); r != nil {
					return r
				}
				return toolctx.ErrorResult(makeErr(in.Shape, req.Tool, secretFor(in.ID)))
			}
			return next.CallTool(ctx, req)
		})
	}
	return middleware.New(
		middleware.After(after),
		middleware.Diagnostics(diag),
		guard,
		middleware.Normalize(errs.Normalizer{}),
		middleware.When(middleware.Tools("slow", "slow_raw", "typed_slow_raw", "tm_slow_raw", "slow_ok"), middleware.Timeout(100*time.Millisecond)),
		middleware.Recover,
	).Middleware()
}

type failArgs struct {
	Shape string `json:"shape"`
	ID    int    `json:"id"`
}

type numArgs struct {
	N int `json:"n" jsonschema:"a number"`
}

type numOut struct {
	Value string `json:"value"`
}

// errShapes are the error shapes a handler returns; panicShapes the ways
// it panics.
var (
	errShapes   = []string{"plain", "wrapped", "joined", "public", "public_wrapped", "jsonrpc", "errs_internal_cause"}
	panicShapes = []string{"panic_string", "panic_error", "panic_struct", "panic_nil", "panic_runtime", "panic_errs"}
)

func makeErr(shape, tool, secret string) error {
	if err := hostileWire(shape, tool, secret); err != nil {
		return err
	}
	if seed, ok := strings.CutPrefix(shape, "gen:"); ok {
		n, _ := strconv.ParseUint(seed, 10, 64)
		return genErr(n, tool, secret)
	}
	switch shape {
	case "plain":
		return errors.New("query failed: " + secret)
	case "wrapped":
		return fmt.Errorf("load invoice: %w", errors.New(secret))
	case "joined":
		return errors.Join(errors.New("first"), fmt.Errorf("second: %s", secret))
	case "public":
		return errs.NotFound("no such invoice").WithDetail(map[string]any{"id": 7}).WithCause(errors.New(secret))
	case "public_wrapped":
		return fmt.Errorf("while %s: %w", secret, errs.PermissionDenied("not yours"))
	case "jsonrpc":
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: secret}
	case "errs_internal_cause":
		return errs.New(errs.Code("bogus"), "").WithCause(errors.New(secret))
	}
	return errors.New("unknown shape " + shape + " " + secret)
}

func doPanic(shape, secret string) {
	switch shape {
	case "panic_string":
		panic(secret)
	case "panic_error":
		panic(fmt.Errorf("boom: %s", secret))
	case "panic_struct":
		panic(struct{ DSN string }{secret})
	case "panic_nil":
		panic(nil)
	case "panic_runtime":
		var m map[string]int
		//lint:ignore SA5000 the nil-map write is the deliberate panic under test
		m[secret]++
	case "panic_errs":
		panic(errs.NotFound(secret))
	}
}

func isPanic(shape string) bool {
	for _, s := range panicShapes {
		if s == shape {
			return true
		}
	}
	return false
}

// expectPublic is what the client must see for a failure shape: the code
// and message, and whether the raw message is scrubbed.
func expectPublic(shape string) (code errs.Code, msg string, scrubbed bool) {
	switch shape {
	case "public":
		return errs.CodeNotFound, "no such invoice", false
	case "public_wrapped":
		return errs.CodePermissionDenied, "not yours", false
	case "errs_internal_cause":
		return errs.CodeInternal, errs.GenericMessage, false
	}
	return errs.CodeInternal, errs.GenericMessage, true
}

// rawHasSecret reports whether a shape's raw message holds the secret.
func rawHasSecret(shape string) bool {
	switch shape {
	case "panic_nil", "panic_runtime", "output":
		return false
	}
	return true
}

// allContent is a result with every content kind, annotations, icons,
// structured content and _meta.
func allContent() *mcp.CallToolResult {
	size := int64(1234)
	ann := &mcp.Annotations{Audience: []mcp.Role{"user", "assistant"}, Priority: 0.5, LastModified: "2025-01-12T15:00:58Z"}
	return &mcp.CallToolResult{
		Meta: mcp.Meta{"trace": "abc", "nested": map[string]any{"k": []any{1.0, "two"}}},
		Content: []mcp.Content{
			&mcp.TextContent{Text: "hello", Annotations: ann, Meta: mcp.Meta{"t": 1.0}},
			&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G', 0, 1}, MIMEType: "image/png", Annotations: ann, Meta: mcp.Meta{"i": true}},
			&mcp.AudioContent{Data: []byte("RIFF....WAVE"), MIMEType: "audio/wav", Meta: mcp.Meta{"a": "x"}},
			&mcp.ResourceLink{URI: "file:///r.txt", Name: "r", Title: "R", Description: "a link", MIMEType: "text/plain", Size: &size,
				Icons:       []mcp.Icon{{Source: "https://x/i.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: mcp.IconThemeDark}},
				Annotations: ann, Meta: mcp.Meta{"l": 2.0}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///t.txt", MIMEType: "text/plain", Text: "inline", Meta: mcp.Meta{"rc": 1.0}}, Annotations: ann},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}}},
		},
		StructuredContent: map[string]any{"total": 3.0, "items": []any{"a", "b"}},
	}
}

// buildServer returns the test server: native tools of both kinds, toolmw
// tools, an SDK middleware inside toolmw's, and the chain.
func buildServer(rec *recorder, transport toolctx.Transport) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "toolmw-test", Version: "0"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)

	// Native raw handler: every content kind.
	s.AddTool(&mcp.Tool{Name: "all_content", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return allContent(), nil
	})
	// Native typed handler.
	mcp.AddTool(s, &mcp.Tool{Name: "typed"}, func(ctx context.Context, req *mcp.CallToolRequest, in numArgs) (*mcp.CallToolResult, numOut, error) {
		return nil, numOut{Value: fmt.Sprint(in.N * 2)}, nil
	})
	// Native typed failures and panics.
	mcp.AddTool(s, &mcp.Tool{Name: "sdk_typed_fail"}, func(ctx context.Context, req *mcp.CallToolRequest, in failArgs) (*mcp.CallToolResult, any, error) {
		secret := secretFor(in.ID)
		doPanic(in.Shape, secret)
		doGoexit(in.Shape)
		if r := sdkHostileResult(in.Shape, secret); r != nil {
			out := r.StructuredContent
			r.StructuredContent = nil
			return r, out, nil
		}
		return nil, nil, makeErr(in.Shape, req.Params.Name, secret)
	})
	// Native typed tool with an output schema, whose result cannot be
	// encoded.
	mcp.AddTool(s, &mcp.Tool{Name: "sdk_out_enc", OutputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest, in failArgs) (*mcp.CallToolResult, map[string]any, error) {
			r := sdkHostileResult(in.Shape, secretFor(in.ID))
			out, _ := r.StructuredContent.(map[string]any)
			if out == nil {
				out = map[string]any{}
			}
			r.StructuredContent = nil
			return r, out, nil
		})
	// Native typed tool whose output fails its schema.
	mcp.AddTool(s, &mcp.Tool{Name: "sdk_output_fail", OutputSchema: json.RawMessage(`{"type":"object","properties":{"value":{"type":"string","maxLength":3}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest, in failArgs) (*mcp.CallToolResult, numOut, error) {
			return nil, numOut{Value: secretFor(in.ID)}, nil
		})
	// Native raw failures and panics (the SDK sends code 0 + raw text).
	s.AddTool(&mcp.Tool{Name: "sdk_raw_fail", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in failArgs
		_ = json.Unmarshal(req.Params.Arguments, &in)
		secret := secretFor(in.ID)
		doPanic(in.Shape, secret)
		doGoexit(in.Shape)
		if in.Shape == "nil_result" {
			return nil, nil
		}
		if r := sdkHostileResult(in.Shape, secret); r != nil {
			return r, nil
		}
		return nil, makeErr(in.Shape, req.Params.Name, secret)
	})
	// Native tool that waits for the context, then returns late content.
	// block runs until its context ends, or for wait_ms (1 s by default) on
	// a transport that does not deliver a cancellation; it records that it
	// runs, for a test that cancels the call then.
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			ID     int `json:"id"`
			WaitMS int `json:"wait_ms"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &in)
		if in.WaitMS == 0 {
			in.WaitMS = 1000
		}
		rec.add(record{Kind: "entered", Case: in.ID})
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(in.WaitMS) * time.Millisecond):
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "LATE-CONTENT " + secretFor(0)}}}, nil
	})
	// Native tool behind a toolmw Timeout.
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("slow: %w (%s)", ctx.Err(), secretFor(1))
	})
	// Tools that return after the deadline (Timeout, see chain) or after
	// the client cancelled: a raw error that does not wrap the context's,
	// or a success.
	lateRaw := func(ctx context.Context, wait time.Duration, args json.RawMessage) error {
		var in failArgs
		_ = json.Unmarshal(args, &in)
		rec.add(record{Kind: "entered", Case: in.ID}) // for a test that cancels the call once it runs
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		return errors.New("read tcp 10.0.0.7:5432: connection reset by peer " + secretFor(in.ID))
	}
	s.AddTool(&mcp.Tool{Name: "slow_raw", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, lateRaw(ctx, time.Minute, req.Params.Arguments)
	})
	mcp.AddTool(s, &mcp.Tool{Name: "typed_slow_raw"}, func(ctx context.Context, req *mcp.CallToolRequest, in failArgs) (*mcp.CallToolResult, any, error) {
		return nil, nil, lateRaw(ctx, time.Minute, req.Params.Arguments)
	})
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "tm_slow_raw", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(lateRaw(ctx, time.Minute, req.Arguments.JSON()))
	})))
	s.AddTool(&mcp.Tool{Name: "slow_ok", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "LATE-CONTENT " + secretFor(0)}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "block_raw", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, lateRaw(ctx, time.Minute, req.Params.Arguments)
	})
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "tm_block_raw", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(lateRaw(ctx, time.Minute, req.Arguments.JSON()))
	})))
	// A URL elicitation, a protocol flow a handler starts on purpose; its
	// error carries fields the protocol does not define.
	elicit := func() error {
		err := mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", Message: "Sign in to continue", URL: "https://example.com/login", ElicitationID: "e1",
			Meta: mcp.Meta{"dsn": secretFor(0)}}})
		we := err.(*jsonrpc.Error)
		we.Message = "elicit: " + secretFor(0)
		return we
	}
	s.AddTool(&mcp.Tool{Name: "elicit", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, elicit()
	})
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "tm_elicit", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(elicit())
	})))
	// A native handler's own isError result: public.
	s.AddTool(&mcp.Tool{Name: "own_error", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the invoice is locked"}}}, nil
	})
	// Tools the guard interceptor and the inner SDK middleware fail.
	s.AddTool(&mcp.Tool{Name: "guard_fail", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	s.AddTool(&mcp.Tool{Name: "sdkmw_fail", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	// toolmw tools.
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "tm_all_content", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		return fromSDKForTest(allContent())
	})))
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "tm_fail", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		var in failArgs
		_ = json.Unmarshal(req.Arguments.JSON(), &in)
		secret := secretFor(in.ID)
		doPanic(in.Shape, secret)
		doGoexit(in.Shape)
		if in.Shape == "nil_result" {
			return nil
		}
		if r := hostileResult(in.Shape, secret); r != nil {
			return r
		}
		return toolctx.ErrorResult(makeErr(in.Shape, req.Tool, secret))
	})))
	// A toolmw tool with an output schema, whose result cannot be encoded.
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "tm_out_enc", InputSchema: obj, OutputSchema: json.RawMessage(`{"type":"object"}`)},
		toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			var in failArgs
			_ = json.Unmarshal(req.Arguments.JSON(), &in)
			r := hostileResult(in.Shape, secretFor(in.ID))
			if r.StructuredContent == nil {
				r.StructuredContent = map[string]any{}
			}
			return r
		})))
	// A toolmw tool that reports progress and logs (notify_test.go).
	must(mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "notify"}, notifyTool))
	must(mcpsdk.AddTypedTool(s, &mcp.Tool{Name: "tm_typed"}, func(ctx context.Context, req *toolctx.Request, in numArgs) (numOut, error) {
		return numOut{Value: fmt.Sprint(in.N * 2)}, nil
	}))
	must(mcpsdk.AddTool(s, &mcp.Tool{Name: "whoami", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		sub := ""
		if req.Identity != nil {
			sub = req.Identity.Subject
		}
		return toolctx.StructuredResult(map[string]any{"transport": req.Transport, "session": req.SessionID, "subject": sub,
			"call_id": req.CallID, "meta": req.Meta, "own_meta": toolctx.DetailsOf(req).Meta(), "has_header": req.Header != nil})
	})))

	// An SDK middleware inside toolmw's, failing with a raw error.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params.Name == "sdkmw_fail" {
				var in failArgs
				_ = json.Unmarshal(r.Params.Arguments, &in)
				doGoexit(in.Shape)
				return nil, makeErr(in.Shape, r.Params.Name, secretFor(in.ID))
			}
			return next(ctx, method, req)
		}
	})
	addUnreadable(s)
	mcpsdk.Install(s, chain(rec), mcpsdk.WithTransport(transport))
	return s
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// fromSDKForTest builds the toolctx form of allContent by hand.
func fromSDKForTest(r *mcp.CallToolResult) *toolctx.CallResult {
	size := int64(1234)
	p := 0.5
	ann := &toolctx.Annotations{Audience: []toolctx.Role{"user", "assistant"}, Priority: &p, LastModified: "2025-01-12T15:00:58Z"}
	return &toolctx.CallResult{
		Meta: map[string]any{"trace": "abc", "nested": map[string]any{"k": []any{1.0, "two"}}},
		Content: []toolctx.Content{
			&toolctx.Text{Text: "hello", Annotations: ann, Meta: map[string]any{"t": 1.0}},
			&toolctx.Image{Data: []byte{0x89, 'P', 'N', 'G', 0, 1}, MIMEType: "image/png", Annotations: ann, Meta: map[string]any{"i": true}},
			&toolctx.Audio{Data: []byte("RIFF....WAVE"), MIMEType: "audio/wav", Meta: map[string]any{"a": "x"}},
			&toolctx.ResourceLink{URI: "file:///r.txt", Name: "r", Title: "R", Description: "a link", MIMEType: "text/plain", Size: &size,
				Icons:       []toolctx.Icon{{Src: "https://x/i.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"}},
				Annotations: ann, Meta: map[string]any{"l": 2.0}},
			&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///t.txt", MIMEType: "text/plain", Text: "inline", Meta: map[string]any{"rc": 1.0}}, Annotations: ann},
			&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}}},
		},
		StructuredContent: r.StructuredContent,
	}
}

const serverEnv = "MCPSDK_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if path := os.Getenv(serverEnv); path != "" {
		runStdioServer(path)
		return
	}
	// No goroutine of a server, client or transport may outlive the tests.
	goleak.VerifyTestMain(m)
}

// runStdioServer is the stdio server process: hook records go to path.
func runStdioServer(path string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		os.Exit(3)
	}
	rec := &recorder{file: f}
	s := buildServer(rec, toolctx.TransportStdio)
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	_ = f.Close()
	os.Exit(0)
}
