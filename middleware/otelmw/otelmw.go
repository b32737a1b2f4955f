package otelmw

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/toolmw/toolmw/middleware/otelmw"

// New returns the OpenTelemetry interceptor: a SERVER span named
// "tools/call {gen_ai.tool.name}" and one mcp.server.operation.duration
// measurement per tool call, named as the MCP semantic conventions name
// them (see the package documentation for every attribute). A bad option
// (a nil provider, [WithPanicStack] without [WithRawCause]) is an error
// here; so is a meter that refuses the histogram.
//
// Place it outermost, outside audit.Interceptor, so that the span covers the
// whole chain and the audit row can record the span's ids.
//
// With the no-op providers of go.opentelemetry.io/otel/trace/noop and
// go.opentelemetry.io/otel/metric/noop it returns the next handler
// unchanged: nothing is read, nothing is recorded.
func New(opts ...Option) (toolctx.Middleware, error) {
	c := &config{}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("otelmw: New was given a nil Option")
		}
		o(c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.stack && !c.rawCause {
		return nil, errors.New("otelmw: WithPanicStack needs WithRawCause: the stack is recorded only in the raw cause's event")
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	_, noTraces := c.tp.(tracenoop.TracerProvider)
	_, noMetrics := c.mp.(metricnoop.MeterProvider)
	if noTraces && noMetrics {
		return func(next toolctx.Handler) toolctx.Handler { return next }, nil
	}
	in := &interceptor{cfg: c, spans: !noTraces, metrics: !noMetrics}
	if in.spans {
		in.tracer = c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
	}
	if in.metrics {
		meter := c.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
		h, err := meter.Float64Histogram(metricName,
			metric.WithUnit("s"),
			metric.WithDescription("MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent."),
			metric.WithExplicitBucketBoundaries(bucketBoundaries...))
		if err != nil {
			return nil, fmt.Errorf("otelmw: cannot create the %s histogram: %w", metricName, err)
		}
		in.hist = h
	}
	return func(next toolctx.Handler) toolctx.Handler {
		return handler{in: in, next: next}
	}, nil
}

type interceptor struct {
	cfg     *config
	tracer  trace.Tracer
	hist    metric.Float64Histogram
	spans   bool
	metrics bool

	names  boundedCache[string, string]                   // tool -> span name
	series boundedCache[seriesKey, []metric.RecordOption] // the metric's attribute sets
}

type handler struct {
	in   *interceptor
	next toolctx.Handler
}

// maxAttrs bounds the attributes of one call: the span's, and the metric's.
const maxAttrs = 14

// callAttrs is a buffer of attributes. The span's are set through an
// interface method, so a buffer on the stack would escape: it comes from a
// pool instead (implementations copy the attributes they are given, as the
// SDK does).
type callAttrs struct {
	kv [maxAttrs]attribute.KeyValue
	n  int
}

var attrPool = sync.Pool{New: func() any { return new(callAttrs) }}

func (a *callAttrs) add(f AttributeFilter, kv attribute.KeyValue) {
	if f != nil && !f(kv) {
		return
	}
	a.kv[a.n] = kv
	a.n++
}

func (a *callAttrs) slice() []attribute.KeyValue { return a.kv[:a.n] }

func (a *callAttrs) reset() {
	clear(a.kv[:a.n]) // drop the strings: the pool must not keep a call's values alive
	a.n = 0
}

var (
	attrMethod = keyMethodName.String(methodToolsCall)
	// gen_ai.operation.name SHOULD be execute_tool for a tool call [MCP
	// common.yaml] [SC].
	attrOperation = semconv.GenAIOperationNameExecuteTool
	attrHTTP      = keyNetworkProtocolName.String("http")
	attrToolError = keyErrorType.String(errorTypeToolError)

	// startOpts are the options of every span's start, boxed once. The
	// attributes are set right after the start: passing them as an option
	// costs two allocations per call (the option and the SDK's copy), so
	// a sampler sees the span's name and kind, not its attributes.
	startOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
)

// CallTool runs the call inside its span and records its duration.
func (h handler) CallTool(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
	in, f := h.in, h.in.cfg.filter
	start := time.Now()
	version := protocolVersion(req)
	transport := networkTransport(req.Transport)

	var span trace.Span
	callCtx := ctx
	if in.spans {
		parent, link := in.parent(ctx, req)
		opts := startOpts
		if link != nil {
			opts = []trace.SpanStartOption{startOpts[0], trace.WithLinks(link...)}
		}
		callCtx, span = in.tracer.Start(parent, in.spanName(req.Tool), opts...)
		if span.IsRecording() {
			sa := attrPool.Get().(*callAttrs)
			sa.kv[0] = attrMethod
			sa.n = 1
			sa.add(f, attrOperation)
			sa.add(f, keyToolName.String(req.Tool))
			if version != "" {
				sa.add(f, keyProtocolVersion.String(version))
			}
			if req.SessionID != "" && (version == "" || version < protocolWithoutSessions) {
				sa.add(f, keySessionID.String(req.SessionID))
			}
			sa.add(f, KeyCallID.String(req.CallID))
			if transport.Valid() {
				sa.add(f, transport)
			}
			if isHTTP(req.Transport) {
				sa.add(f, attrHTTP)
				if a := clientAddressFrom(ctx); a != nil {
					sa.add(f, keyClientAddress.String(a.host))
					if a.port > 0 {
						sa.add(f, keyClientPort.Int(a.port))
					}
				}
			}
			if in.cfg.args != nil && len(req.Arguments) > 0 {
				if red := in.cfg.args(req.Tool, req.Arguments); red != nil {
					sa.add(f, keyToolCallArguments.String(string(red)))
				}
			}
			span.SetAttributes(sa.slice()...)
			sa.reset()
			attrPool.Put(sa)
			sc := span.SpanContext()
			callCtx = toolctx.WithTraceRef(callCtx, toolctx.TraceRef{TraceID: sc.TraceID(), SpanID: sc.SpanID()})
		}
	}

	finished := false
	defer func() {
		if finished {
			return
		}
		// A panic (or a Goexit) came through: no Recover inside. Record it
		// as the internal failure the adapter will make of it, and let it
		// go on.
		v := recover()
		val := v
		if val == nil {
			val = errs.ErrGoexit
		}
		in.finish(callCtx, span, start, version, req, toolctx.ErrorResult(errs.NewPanicError(val)))
		if v != nil {
			panic(v)
		}
	}()
	// A result the adapter cannot send is recorded as the failure the
	// client gets (see toolctx.Sendable).
	res = toolctx.Sendable(callCtx, h.next.CallTool(callCtx, req))
	finished = true
	in.finish(callCtx, span, start, version, req, res)
	return res
}

// spanName is "tools/call {gen_ai.tool.name}", cached per tool.
func (in *interceptor) spanName(tool string) string {
	if n, ok := in.names.get(tool); ok {
		return n
	}
	n := methodToolsCall + " " + tool
	in.names.put(tool, n)
	return n
}

// parent returns the context the span starts in, and a link to the ambient
// span when the parent is not it. The conventions: the server span's
// parent SHOULD be the context extracted from params._meta, and the ambient
// context SHOULD be linked [MCP docs/gen-ai/mcp.md, "Context
// propagation"]. Without trace context in _meta, the HTTP request's own
// headers (the request that carried this call, which on a stateful go-sdk
// session is not the one whose context the call runs in) give the parent,
// unless the ambient span (otelhttp's, say) is in the same trace: it is then
// the closer parent.
func (in *interceptor) parent(ctx context.Context, req *toolctx.Request) (context.Context, []trace.Link) {
	prop := in.cfg.prop
	ambient := trace.SpanContextFromContext(ctx)
	if len(req.Meta) > 0 {
		mctx := prop.Extract(ctx, metaCarrier(req.Meta))
		if sc := trace.SpanContextFromContext(mctx); sc.IsValid() && !sc.Equal(ambient) {
			if ambient.IsValid() {
				return mctx, []trace.Link{{SpanContext: ambient}}
			}
			return mctx, nil
		}
		ctx = mctx // baggage, if any
	}
	if len(req.Header) > 0 {
		hctx := prop.Extract(ctx, propagation.HeaderCarrier(req.Header))
		if sc := trace.SpanContextFromContext(hctx); sc.IsValid() && !sc.Equal(ambient) {
			if ambient.IsValid() && ambient.TraceID() == sc.TraceID() {
				return trace.ContextWithSpanContext(hctx, ambient), nil
			}
			return hctx, nil
		}
		ctx = hctx
	}
	return ctx, nil
}

// finish ends the span and records the measurement of a call that ended
// with res.
func (in *interceptor) finish(ctx context.Context, span trace.Span, start time.Time, version string, req *toolctx.Request, res *toolctx.CallResult) {
	var o toolctx.Outcome
	if res.Failed() {
		o = toolctx.Classify(ctx, res, in.cfg.normalizer)
	}
	if span != nil {
		in.endSpan(span, o, req, res)
	}
	if in.metrics {
		in.hist.Record(ctx, time.Since(start).Seconds(), in.seriesOf(req, version, o)...)
	}
}

// failure is what the conventions say of a failed call.
type failure struct {
	code     attribute.KeyValue // toolmw.error.code
	errType  attribute.KeyValue // error.type, when the call failed as an error
	rpcCode  attribute.KeyValue // rpc.response.status_code, for a JSON-RPC error
	hasError bool
}

func failureOf(o toolctx.Outcome) failure {
	f := failure{code: KeyErrorCode.String(string(o.Public.Code))}
	if jc, proto := protocolError(o.Public.Code); proto {
		s := strconv.Itoa(jc)
		f.rpcCode = keyRPCStatusCode.String(s)
		if !notAnError(jc) {
			f.errType, f.hasError = keyErrorType.String(s), true
		}
		return f
	}
	f.errType, f.hasError = attrToolError, true
	return f
}

func (in *interceptor) endSpan(span trace.Span, o toolctx.Outcome, req *toolctx.Request, res *toolctx.CallResult) {
	f := in.cfg.filter
	switch {
	case o.Failed && span.IsRecording():
		fl := failureOf(o)
		ea := attrPool.Get().(*callAttrs)
		ea.add(f, fl.code)
		if fl.hasError {
			ea.add(f, fl.errType)
		}
		if fl.rpcCode.Valid() {
			ea.add(f, fl.rpcCode)
		}
		span.SetAttributes(ea.slice()...)
		ea.reset()
		attrPool.Put(ea)
		if fl.hasError {
			// The public message: what the client was told, never the raw
			// cause.
			span.SetStatus(codes.Error, o.Public.Message)
		}
		if o.Public.Code == errs.CodeUnknownTool {
			// The name the client asked for is not a low-cardinality
			// target [MCP spans.yaml, span name]: it stays in
			// gen_ai.tool.name only.
			span.SetName(methodToolsCall)
		}
		if in.cfg.rawCause && o.Scrubbed {
			in.rawEvent(span, res)
		}
	case !o.Failed && in.cfg.result != nil && span.IsRecording():
		if red := in.cfg.result(req.Tool, res); red != nil {
			kv := keyToolCallResult.String(string(red))
			if f == nil || f(kv) {
				span.SetAttributes(kv)
			}
		}
	}
	span.End()
}

// seriesKey identifies the metric's attribute set of a call: everything
// the set is computed from.
type seriesKey struct {
	tool      string // "" for an unknown tool
	version   string
	transport toolctx.Transport
	code      errs.Code
}

// seriesOf returns the measurement options of the call's series, cached.
func (in *interceptor) seriesOf(req *toolctx.Request, version string, o toolctx.Outcome) []metric.RecordOption {
	k := seriesKey{tool: req.Tool, version: version, transport: req.Transport}
	if o.Failed {
		k.code = o.Public.Code
		if k.code == errs.CodeUnknownTool {
			k.tool = "" // the client's choice: unbounded
		}
	}
	if opts, ok := in.series.get(k); ok {
		return opts
	}
	f := in.cfg.filter
	var ma callAttrs
	ma.kv[0] = attrMethod
	ma.n = 1
	ma.add(f, attrOperation)
	if k.tool != "" {
		ma.add(f, keyToolName.String(k.tool))
	}
	if version != "" {
		ma.add(f, keyProtocolVersion.String(version))
	}
	if t := networkTransport(k.transport); t.Valid() {
		ma.add(f, t)
	}
	if isHTTP(k.transport) {
		ma.add(f, attrHTTP)
	}
	if o.Failed {
		fl := failureOf(o)
		ma.add(f, fl.code)
		if fl.hasError {
			ma.add(f, fl.errType)
		}
		if fl.rpcCode.Valid() {
			ma.add(f, fl.rpcCode)
		}
	}
	opts := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(ma.slice()...))}
	in.series.put(k, opts)
	return opts
}

// rawEvent records the raw cause of a scrubbed failure, for WithRawCause.
func (in *interceptor) rawEvent(span trace.Span, res *toolctx.CallResult) {
	cause := res.Cause()
	if cause == nil {
		return
	}
	attrs := []attribute.KeyValue{
		keyExceptionType.String(fmt.Sprintf("%T", cause)),
		// Describe, not Error: it survives an Error method that panics or
		// calls runtime.Goexit, and is bounded; a PanicError's text has the
		// value, never the stack.
		keyExceptionMessage.String(errs.Describe(cause)),
	}
	// PanicOf, not errors.As: it ends on a cyclic Unwrap chain.
	if pe := errs.PanicOf(cause); in.cfg.stack && pe != nil && len(pe.Stack) > 0 {
		attrs = append(attrs, keyExceptionStacktrace.String(string(pe.Stack)))
	}
	span.AddEvent(eventException, trace.WithAttributes(attrs...))
}

// protocolError returns the JSON-RPC code of a failure the adapters send as
// a protocol error rather than an isError result: an unknown tool and a
// malformed request (both adapters pass the SDK's own protocol error
// through for these).
func protocolError(c errs.Code) (int, bool) {
	switch c {
	case errs.CodeUnknownTool, errs.CodeInvalidRequest:
		return c.JSONRPC()
	}
	return 0, false
}

// protocolVersion returns the call's MCP protocol version: the one a client
// of 2026-07-28 or later sends in _meta, else the Mcp-Protocol-Version
// header of an HTTP request. Only values shaped as a revision (YYYY-MM-DD)
// are taken: the value is the client's, and it goes into the metric.
func protocolVersion(req *toolctx.Request) string {
	if v, ok := req.Meta[metaProtocolVersion].(string); ok && isRevision(v) {
		return v
	}
	if req.Header != nil {
		if vs := req.Header[headerProtocolVersion]; len(vs) > 0 && isRevision(vs[0]) {
			return vs[0]
		}
	}
	return ""
}

func isRevision(v string) bool {
	if len(v) != len("2006-01-02") || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}

// networkTransport is network.transport for a toolmw transport: pipe for
// stdio, tcp for the HTTP transports [MCP common.yaml, network.transport
// note] [SC NetworkTransportPipe, NetworkTransportTCP]; nothing for
// in-memory and unknown ones.
func networkTransport(t toolctx.Transport) attribute.KeyValue {
	switch t {
	case toolctx.TransportStdio:
		return semconv.NetworkTransportPipe
	case toolctx.TransportStreamableHTTP, toolctx.TransportSSE:
		return semconv.NetworkTransportTCP
	}
	return attribute.KeyValue{}
}

func isHTTP(t toolctx.Transport) bool {
	return t == toolctx.TransportStreamableHTTP || t == toolctx.TransportSSE
}

// metaCarrier reads trace context from params._meta: the keys are
// unprefixed (traceparent, tracestate, baggage), per SEP-414 and the MCP
// conventions. It never writes.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasPrefix(k, toolctx.ReservedMetaPrefix) {
			keys = append(keys, k)
		}
	}
	return keys
}
