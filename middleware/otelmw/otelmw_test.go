package otelmw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
	traceparent   = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// A traceparent in params._meta becomes the span's parent, on every
// adapter and transport.
func TestTraceparentInMetaIsTheParent(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			tel := newTelemetry(t)
			s := newChain(t, tel)
			c := fx.open(t, s)
			span := callRow(t, s, c, table[0], map[string]any{"traceparent": traceparent, "tracestate": "rojo=00f067aa0ba902b7"})
			p := span.Parent()
			assert.True(t, p.IsRemote(), "the parent is the client's, remote")
			assert.Equal(t, clientTraceID, p.TraceID().String(), "the span continues the client's trace")
			assert.Equal(t, clientSpanID, p.SpanID().String(), "the client's span is the parent")
			assert.Equal(t, clientTraceID, span.SpanContext().TraceID().String(), "same trace")
			assert.Equal(t, "rojo=00f067aa0ba902b7", span.SpanContext().TraceState().String(), "tracestate carried")
			assert.Empty(t, span.Links(), "no ambient span to link")
		})
	}
}

// direct runs a chain with otelmw over h, without an adapter.
func direct(t *testing.T, tel *telemetry, h toolctx.Handler, opts ...otelmw.Option) toolctx.Handler {
	t.Helper()
	otel, err := otelmw.New(tel.options(opts...)...)
	require.NoError(t, err)
	out, err := middleware.New(otel, middleware.Normalize(errs.Normalizer{}), middleware.Recover).Then(h)
	require.NoError(t, err)
	return out
}

func TestBaggageAndAmbientLink(t *testing.T) {
	tel := newTelemetry(t)
	var got string
	var inner trace.SpanContext
	h := direct(t, tel, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		got = baggage.FromContext(ctx).Member("userId").Value()
		inner = trace.SpanContextFromContext(ctx)
		return toolctx.TextResult("ok")
	}))
	ambientCtx, ambient := tel.tp.Tracer("test").Start(context.Background(), "HTTP POST")
	h.CallTool(ambientCtx, &toolctx.Request{Tool: "t", CallID: "c1", Meta: map[string]any{"traceparent": traceparent, "baggage": "userId=alice"}})
	ambient.End()
	spans := tel.waitSpans(t, 2)
	span := spans[0]
	assert.Equal(t, "alice", got, "the _meta's baggage reaches the handler")
	assert.Equal(t, span.SpanContext(), inner, "the handler runs in the span")
	assert.Equal(t, clientSpanID, span.Parent().SpanID().String(), "the _meta's context is the parent, not the ambient span")
	require.Len(t, span.Links(), 1, "the ambient span is linked")
	assert.Equal(t, ambient.SpanContext(), span.Links()[0].SpanContext, "the link is to the ambient span")
}

func TestHTTPHeaderContext(t *testing.T) {
	tel := newTelemetry(t)
	h := direct(t, tel, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") }))
	hdr := http.Header{}
	hdr.Set("Traceparent", traceparent)
	req := &toolctx.Request{Tool: "t", CallID: "c1", Transport: toolctx.TransportStreamableHTTP, Header: hdr}

	// No ambient span: the header's context is the parent.
	h.CallTool(context.Background(), req)
	// A stale ambient span (another trace, as on a stateful go-sdk session):
	// the header still wins.
	staleCtx, stale := tel.tp.Tracer("test").Start(context.Background(), "session opened")
	h.CallTool(staleCtx, req)
	stale.End()
	// otelhttp's span of this very request (same trace): it is the parent.
	hctx := tel.prop.Extract(context.Background(), headerCarrier(hdr))
	reqCtx, reqSpan := tel.tp.Tracer("test").Start(hctx, "HTTP POST /mcp")
	h.CallTool(reqCtx, req)
	reqSpan.End()

	spans := tel.waitSpans(t, 5)
	assert.Equal(t, clientSpanID, spans[0].Parent().SpanID().String(), "the header's span is the parent")
	assert.Equal(t, clientSpanID, spans[1].Parent().SpanID().String(), "a stale ambient span of another trace is not the parent")
	assert.Equal(t, reqSpan.SpanContext().SpanID(), spans[3].Parent().SpanID(), "the HTTP server span of the same trace is the parent")
}

type headerCarrier http.Header

func (h headerCarrier) Get(k string) string { return http.Header(h).Get(k) }
func (h headerCarrier) Set(k, v string)     { http.Header(h).Set(k, v) }
func (h headerCarrier) Keys() []string {
	var ks []string
	for k := range h {
		ks = append(ks, k)
	}
	return ks
}

func TestSessionIDAndProtocolVersion(t *testing.T) {
	tel := newTelemetry(t)
	h := direct(t, tel, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") }))
	bg := context.Background()
	h.CallTool(bg, &toolctx.Request{Tool: "t", SessionID: "s-old", Meta: map[string]any{"io.modelcontextprotocol/protocolVersion": "2025-11-25"}})
	h.CallTool(bg, &toolctx.Request{Tool: "t", SessionID: "s-new", Meta: map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
	h.CallTool(bg, &toolctx.Request{Tool: "t", SessionID: "s-later", Header: http.Header{"Mcp-Protocol-Version": {"2027-01-01"}}, Transport: toolctx.TransportStreamableHTTP})
	h.CallTool(bg, &toolctx.Request{Tool: "t", SessionID: "s-unknown", Transport: toolctx.TransportStdio})
	h.CallTool(bg, &toolctx.Request{Tool: "t", Meta: map[string]any{"io.modelcontextprotocol/protocolVersion": "not a version " + canary}})
	spans := tel.waitSpans(t, 5)
	a := attrs(spans[0].Attributes())
	assert.Equal(t, "s-old", a["mcp.session.id"], "a pre-2026-07-28 session is named")
	assert.Equal(t, "2025-11-25", a["mcp.protocol.version"], "version from _meta")
	a = attrs(spans[1].Attributes())
	assert.NotContains(t, a, "mcp.session.id", "MUST NOT be set for 2026-07-28")
	assert.Equal(t, "2026-07-28", a["mcp.protocol.version"], "version from _meta")
	a = attrs(spans[2].Attributes())
	assert.NotContains(t, a, "mcp.session.id", "MUST NOT be set for later revisions")
	assert.Equal(t, "2027-01-01", a["mcp.protocol.version"], "version from the HTTP header")
	a = attrs(spans[3].Attributes())
	assert.Equal(t, "s-unknown", a["mcp.session.id"], "an unknown version is an older client's: the session is named")
	assert.Equal(t, "pipe", a["network.transport"], "stdio is a pipe")
	assert.NotContains(t, attrs(spans[4].Attributes()), "mcp.protocol.version", "a value that is not a revision is not recorded")
}

// failing returns handlers that fail in every shape, each with canary in
// its raw cause, and whether the shape is scrubbed.
func failing(r *rand.Rand, canary string) []struct {
	h        toolctx.Handler
	scrubbed bool
	panics   bool
} {
	ret := func(err error) toolctx.Handler {
		return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.ErrorResult(err) })
	}
	pan := func(v any) toolctx.Handler {
		return toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { panic(v) })
	}
	type shape = struct {
		h        toolctx.Handler
		scrubbed bool
		panics   bool
	}
	all := []shape{
		{ret(errors.New(canary)), true, false},
		{ret(fmt.Errorf("query: %w", errors.New(canary))), true, false},
		{ret(errors.Join(errors.New("a"), errors.New(canary))), true, false},
		{ret(errs.NotFound("no such record").WithCause(errors.New(canary))), false, false},
		{ret(fmt.Errorf("ctx: %w", errs.Unavailable("try later").WithCause(errors.New(canary)))), false, false},
		{ret(&json.UnsupportedValueError{Str: canary}), true, false},
		{pan(canary), true, true},
		{pan(fmt.Errorf("wrapped: %w", errors.New(canary))), true, true},
		{pan(errs.InvalidArguments(canary)), true, true},
		{toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			return toolctx.ScrubbedResult(errs.Public{Code: errs.CodeTimeout, Message: "took too long"}, errors.New(canary))
		}), true, false},
	}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all
}

// The canary property on exported spans: no raw cause in any attribute,
// event or status unless WithRawCause, and with it only in the event of a
// scrubbed failure; the stack only with WithPanicStack too.
func TestCanaryNeverInSpansByDefault(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	for _, mode := range []string{"default", "raw-cause", "raw-cause+stack"} {
		t.Run(mode, func(t *testing.T) {
			var opts []otelmw.Option
			if mode != "default" {
				opts = append(opts, otelmw.WithRawCause())
			}
			if mode == "raw-cause+stack" {
				opts = append(opts, otelmw.WithPanicStack())
			}
			for round := 0; round < 5; round++ {
				canary := fmt.Sprintf("CANARY-%08x-postgres://admin:hunter2@db.internal", r.Uint32())
				for i, sh := range failing(r, canary) {
					tel := newTelemetry(t)
					h := direct(t, tel, sh.h, opts...)
					res := h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c", Arguments: toolctx.RawArguments(json.RawMessage(`{"password":"` + canary + `"}`))})
					require.True(t, res.IsError, "shape %d fails", i)
					span := tel.waitSpans(t, 1)[0]
					msg := fmt.Sprintf("%s shape %d", mode, i)
					var outside strings.Builder
					fmt.Fprintf(&outside, "%s|%s|%v|%v", span.Name(), span.Status().Description, span.Attributes(), span.Links())
					assert.NotContains(t, outside.String(), "CANARY", "%s: never in the name, status or attributes", msg)
					var events []string
					var stack bool
					for _, ev := range span.Events() {
						a := attrs(ev.Attributes)
						events = append(events, fmt.Sprintf("%s %v", ev.Name, ev.Attributes))
						_, stack = a["exception.stacktrace"]
					}
					joined := strings.Join(events, "|")
					switch {
					case mode == "default" || !sh.scrubbed:
						assert.NotContains(t, joined, "CANARY", "%s: no raw cause in events", msg)
					default:
						require.Len(t, span.Events(), 1, "%s: one exception event", msg)
						assert.Equal(t, "exception", span.Events()[0].Name, "%s: the event", msg)
						assert.Contains(t, attrs(span.Events()[0].Attributes)["exception.message"], canary, "%s: the raw message, opted in", msg)
						assert.Equal(t, mode == "raw-cause+stack" && sh.panics, stack, "%s: the stack only when opted in, for a panic", msg)
					}
					assert.NotContains(t, joined+outside.String(), "hunter2\"}", "%s: arguments never recorded without a redactor", msg)
				}
			}
		})
	}
}

func TestArgumentsAndResultOnlyWithRedactor(t *testing.T) {
	tel := newTelemetry(t)
	ok := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("secret result")
	})
	req := &toolctx.Request{Tool: "t", Arguments: toolctx.RawArguments(json.RawMessage(`{"q":"x","password":"p"}`))}
	direct(t, tel, ok).CallTool(context.Background(), req)
	direct(t, tel, ok,
		otelmw.WithArguments(func(tool string, args json.RawMessage) json.RawMessage { return json.RawMessage(`{"q":"x"}`) }),
		otelmw.WithResult(func(tool string, res *toolctx.CallResult) json.RawMessage { return json.RawMessage(`{"n":1}`) }),
	).CallTool(context.Background(), req)
	spans := tel.waitSpans(t, 2)
	a := attrs(spans[0].Attributes())
	assert.NotContains(t, a, "gen_ai.tool.call.arguments", "no arguments without a redactor")
	assert.NotContains(t, a, "gen_ai.tool.call.result", "no result without a redactor")
	a = attrs(spans[1].Attributes())
	assert.Equal(t, `{"q":"x"}`, a["gen_ai.tool.call.arguments"], "the redactor's arguments")
	assert.Equal(t, `{"n":1}`, a["gen_ai.tool.call.result"], "the redactor's result")
}

func TestAttributeFilter(t *testing.T) {
	tel := newTelemetry(t)
	drop := func(kv attribute.KeyValue) bool { return kv.Key != "gen_ai.tool.name" && kv.Key != "mcp.method.name" }
	h := direct(t, tel, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(errs.NotFound("gone"))
	}), otelmw.WithAttributeFilter(drop))
	h.CallTool(context.Background(), &toolctx.Request{Tool: "t"})
	a := attrs(tel.waitSpans(t, 1)[0].Attributes())
	assert.NotContains(t, a, "gen_ai.tool.name", "filtered out of the span")
	assert.Equal(t, "tools/call", a["mcp.method.name"], "the required attribute stays")
	assert.Equal(t, "not_found", a["toolmw.error.code"], "the rest stays")
	p := tel.histogram(t)
	require.Len(t, p, 1, "one point")
	pa := attrs(p[0].Attributes.ToSlice())
	assert.NotContains(t, pa, "gen_ai.tool.name", "filtered out of the metric")
	assert.Equal(t, "tools/call", pa["mcp.method.name"], "the required attribute stays on the metric")
}

// A panic that no Recover inside catches still ends the span, as an
// internal failure, and goes on.
func TestPanicThroughEndsTheSpan(t *testing.T) {
	tel := newTelemetry(t)
	otel, err := otelmw.New(tel.options()...)
	require.NoError(t, err)
	h := otel(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { panic("boom " + canary) }))
	require.PanicsWithValue(t, "boom "+canary, func() { h.CallTool(context.Background(), &toolctx.Request{Tool: "t"}) }, "the panic goes on")
	span := tel.waitSpans(t, 1)[0]
	a := attrs(span.Attributes())
	assert.Equal(t, "internal", a["toolmw.error.code"], "an internal failure")
	assert.Equal(t, "tool_error", a["error.type"], "an isError result for the client")
	assertNoCanary(t, span, "panic through")
}

func TestConstructionErrors(t *testing.T) {
	for name, opts := range map[string][]otelmw.Option{
		"nil logger":            {otelmw.WithFallbackLogger(nil)},
		"nil tracer provider":   {otelmw.WithTracerProvider(nil)},
		"nil meter provider":    {otelmw.WithMeterProvider(nil)},
		"nil propagator":        {otelmw.WithPropagator(nil)},
		"nil filter":            {otelmw.WithAttributeFilter(nil)},
		"nil arguments":         {otelmw.WithArguments(nil)},
		"nil result":            {otelmw.WithResult(nil)},
		"stack without raw msg": {otelmw.WithPanicStack()},
	} {
		m, err := otelmw.New(opts...)
		assert.Error(t, err, "%s: an error at construction", name)
		assert.Nil(t, m, "%s: no middleware", name)
		if err != nil {
			assert.Contains(t, err.Error(), "otelmw:", "%s: the error names the package", name)
		}
	}
}

// A nil Option asks for nothing: it is skipped, as in every constructor of
// toolmw (it was an error here alone).
func TestNilOptionIsSkipped(t *testing.T) {
	tel := newTelemetry(t)
	m, err := otelmw.New(append(tel.options(), nil)...)
	require.NoError(t, err)
	require.NotNil(t, m)
}

func TestNoopProvidersPassThrough(t *testing.T) {
	m, err := otelmw.New(otelmw.WithTracerProvider(tracenoop.NewTracerProvider()), otelmw.WithMeterProvider(metricnoop.NewMeterProvider()))
	require.NoError(t, err)
	next := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return nil })
	assert.Equal(t, fmt.Sprintf("%p", next), fmt.Sprintf("%p", m(next)), "with no-op providers the next handler is returned as is")
}

func TestClientAddress(t *testing.T) {
	var got *http.Request
	h := otelmw.ClientAddress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r }))
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.RemoteAddr = "not an address"
	h.ServeHTTP(httptest.NewRecorder(), r)
	assert.Same(t, r, got, "an address that does not parse leaves the request as it is")
}

// selfWrapping wraps itself: errors.As on it never ends.
type selfWrapping struct{ secret string }

func (e *selfWrapping) Error() string { return "self: " + e.secret }
func (e *selfWrapping) Unwrap() error { return e }

// errorPanics panics in Error.
type errorPanics struct{}

func (errorPanics) Error() string { panic("Error exploded") }

// TestRawCauseHostileErrors: with WithRawCause and WithPanicStack, a cause
// that wraps itself does not hang the call (the panic is looked for with a
// bounded walk), and a cause whose Error panics does not panic the
// interceptor: the event holds its description.
func TestRawCauseHostileErrors(t *testing.T) {
	for name, err := range map[string]error{"cycle": &selfWrapping{"CANARY"}, "Error panics": errorPanics{}} {
		tel := newTelemetry(t)
		h := direct(t, tel, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			return toolctx.ErrorResult(err)
		}), otelmw.WithRawCause(), otelmw.WithPanicStack())
		done := make(chan *toolctx.CallResult, 1)
		go func() {
			defer close(done)
			done <- h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c"})
		}()
		select {
		case res, ok := <-done:
			require.True(t, ok, "%s: the interceptor returned (it panicked)", name)
			require.True(t, res.IsError, name)
		case <-time.After(time.Minute):
			t.Fatalf("%s: the call hangs", name)
		}
		span := tel.waitSpans(t, 1)[0]
		require.Len(t, span.Events(), 1, "%s: the exception event", name)
		assert.NotEmpty(t, attrs(span.Events()[0].Attributes)["exception.message"], "%s: described", name)
	}
}

// A redactor that panics records nothing of what it redacts, leaves the
// call alone and is reported once to the fallback logger.
func TestPanickingRedactorsRecordNothing(t *testing.T) {
	tel := newTelemetry(t)
	var logged bytes.Buffer
	h := direct(t, tel, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("fine")
	}),
		otelmw.WithFallbackLogger(slog.New(slog.NewTextHandler(&logged, nil))),
		otelmw.WithArguments(func(string, json.RawMessage) json.RawMessage { panic("CANARY-args-redactor") }),
		otelmw.WithResult(func(string, *toolctx.CallResult) json.RawMessage { panic("CANARY-result-redactor") }),
	)
	var res *toolctx.CallResult
	require.NotPanics(t, func() {
		res = h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c-9", Arguments: toolctx.RawArguments(json.RawMessage(`{"q":1}`))})
	})
	assert.False(t, res.Failed(), "the call is unchanged")
	a := attrs(tel.waitSpans(t, 1)[0].Attributes())
	assert.NotContains(t, a, "gen_ai.tool.call.arguments")
	assert.NotContains(t, a, "gen_ai.tool.call.result")
	out := logged.String()
	assert.Equal(t, 1, strings.Count(out, "panic=CANARY-args-redactor"), "the arguments redactor's panic, once")
	assert.Equal(t, 1, strings.Count(out, "panic=CANARY-result-redactor"), "the result redactor's panic, once")
	assert.Equal(t, 2, strings.Count(out, "call_id=c-9"), "with the call id")
}

// One redactor, of the one type, records the same arguments on the span and
// in the audit row.
func TestOneRedactorForSpanAndRow(t *testing.T) {
	tel := newTelemetry(t)
	var redact middleware.ArgumentsRedactor = func(_ string, args json.RawMessage) json.RawMessage {
		return json.RawMessage(`{"q":"kept"}`)
	}
	otel, err := otelmw.New(tel.options(otelmw.WithArguments(redact))...)
	require.NoError(t, err)
	var r rows
	h, err := middleware.New(otel, audit.Interceptor(&r, audit.WithArguments(redact)), middleware.Recover).
		Then(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") }))
	require.NoError(t, err)
	h.CallTool(context.Background(), &toolctx.Request{Tool: "t", Arguments: toolctx.RawArguments(json.RawMessage(`{"q":"kept","password":"p"}`))})
	a := attrs(tel.waitSpans(t, 1)[0].Attributes())
	assert.Equal(t, `{"q":"kept"}`, a["gen_ai.tool.call.arguments"], "the span's arguments")
	got := r.all()
	require.Len(t, got, 1)
	assert.JSONEq(t, `{"q":"kept"}`, string(got[0].Arguments), "the row's arguments, from the same redactor")
}

// An attribute filter that panics is contained as every user hook is: the
// call is answered as usual, the attribute it panicked on is not recorded,
// the others are, and the panic is reported to the fallback logger with the
// attribute's key.
func TestAttributeFilterPanicIsContained(t *testing.T) {
	tel := newTelemetry(t)
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	filter := func(kv attribute.KeyValue) bool {
		if kv.Key == "gen_ai.tool.name" {
			panic("filter boom")
		}
		return true
	}
	h := direct(t, tel, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("ok")
	}), otelmw.WithAttributeFilter(filter), otelmw.WithFallbackLogger(logger))
	var res *toolctx.CallResult
	require.NotPanics(t, func() { res = h.CallTool(context.Background(), &toolctx.Request{Tool: "t"}) })
	assert.False(t, res.Failed(), "the call is answered as usual")
	a := attrs(tel.waitSpans(t, 1)[0].Attributes())
	assert.NotContains(t, a, "gen_ai.tool.name", "the attribute the filter panicked on is not recorded")
	assert.Equal(t, "tools/call", a["mcp.method.name"], "the others are")
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, logs.String(), "attribute filter panicked")
	assert.Contains(t, logs.String(), "attribute=gen_ai.tool.name")
	assert.Contains(t, logs.String(), "filter boom")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
