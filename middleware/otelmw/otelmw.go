package otelmw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/toolmw/toolmw/middleware/otelmw"

// New returns the OpenTelemetry interceptor: a SERVER span named
// "tools/call {gen_ai.tool.name}" and one mcp.server.operation.duration
// measurement per tool call, named as the MCP semantic conventions name
// them (see the package documentation for every attribute). An option
// given a value it cannot use (a nil provider, [WithPanicStack] without
// [WithRawCause]) is an error here, as package middleware's doc ("Knobs")
// says of every constructor that returns one; so is a meter that refuses
// the histogram. A nil Option is skipped.
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
		if o != nil { // a nil Option asks for nothing
			o(c)
		}
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
	in := &interceptor{cfg: c, spans: !noTraces, metrics: !noMetrics, epoch: time.Now()}
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
		c, err := meter.Int64Counter(metricWouldReject,
			metric.WithUnit("{call}"),
			metric.WithDescription("Calls a guard in observe mode would have rejected or changed (middleware.Observe), by guard."))
		if err != nil {
			return nil, fmt.Errorf("otelmw: cannot create the %s counter: %w", metricWouldReject, err)
		}
		in.wouldReject = c
		c, err = meter.Int64Counter(metricCacheLookups,
			metric.WithUnit("{call}"),
			metric.WithDescription("Calls middleware.Cache looked up, by hit or miss."))
		if err != nil {
			return nil, fmt.Errorf("otelmw: cannot create the %s counter: %w", metricCacheLookups, err)
		}
		in.cacheLookups = c
	}
	return func(next toolctx.Handler) toolctx.Handler {
		return handler{in: in, next: next}
	}, nil
}

type interceptor struct {
	cfg    *config
	tracer trace.Tracer
	hist   metric.Float64Histogram
	// wouldReject counts the would_reject notes of the results
	// (toolmw.guard.would_reject).
	wouldReject metric.Int64Counter
	// cacheLookups counts the cache notes of the results
	// (toolmw.cache.lookups).
	cacheLookups metric.Int64Counter
	spans        bool
	metrics      bool

	// epoch is the interceptor's clock: a call's duration is two
	// monotonic reads of time.Since(epoch), where time.Now would read the
	// wall clock too.
	epoch time.Time

	series boundedCache[seriesKey, *series] // what is computed once per series

	guards boundedCache[guardKey, []metric.AddOption] // the counter's attribute sets
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
//
// What depends only on the call's series (tool, protocol version,
// transport) is computed once and cached: the span's name, its constant
// attributes (filtered) and the metric's attribute set. Per call there
// remains the cache lookup, the trace context from _meta or the headers
// (only when there is a key a propagator could read), the span's
// per-call attributes (only when it is recording), the span's ids for the
// audit row, and two monotonic clock reads (only when the histogram is
// enabled).
func (h handler) CallTool(ctx context.Context, req *toolctx.Request) (res *toolctx.CallResult) {
	in := h.in
	version := protocolVersion(req)
	s := in.seriesOf(seriesKey{tool: req.Tool, version: version, transport: req.Transport})
	measure := in.metrics && in.hist.Enabled(ctx)
	var start time.Duration
	if measure {
		start = time.Since(in.epoch)
	}

	var span trace.Span
	callCtx := ctx
	if in.spans {
		parent, link := in.parent(ctx, req, version)
		opts := startOpts
		if link != nil {
			opts = []trace.SpanStartOption{startOpts[0], trace.WithLinks(link...)}
		}
		callCtx, span = in.tracer.Start(parent, s.spanName, opts...)
		if span.IsRecording() {
			in.setCallAttributes(ctx, span, s, version, req)
			sc := span.SpanContext()
			callCtx = toolctx.WithTraceRef(callCtx, toolctx.TraceRef{TraceID: sc.TraceID(), SpanID: sc.SpanID()})
		}
	}

	// A panic or a Goexit that comes through (no Recover inside) is
	// recorded as the internal failure the adapter will make of it, and
	// goes on.
	// (A Scope adds no frame to the stack of a panic below.)
	var sc safecall.Scope
	defer sc.Observe(func(f safecall.Fault) {
		val := f.Value
		if f.Goexit {
			val = errs.ErrGoexit
		}
		in.finish(callCtx, span, measure, start, s, version, req, toolctx.ErrorResult(errs.NewPanicError(val)))
	})
	// A result the adapter cannot send is recorded as the failure the
	// client gets (see adapter.Sendable).
	res = adapter.Sendable(callCtx, h.next.CallTool(callCtx, req))
	sc.Returned()
	in.finish(callCtx, span, measure, start, s, version, req, res)
	return res
}

// setCallAttributes sets the span's attributes: the series' constant ones
// and this call's own, in one SetAttributes (the SDK copies them into one
// slice of the right size). ctx is the call's context before the span.
func (in *interceptor) setCallAttributes(ctx context.Context, span trace.Span, s *series, version string, req *toolctx.Request) {
	f := in.cfg.filter
	sa := attrPool.Get().(*callAttrs)
	sa.n = copy(sa.kv[:], s.spanAttrs)
	if req.SessionID != "" && (version == "" || version < protocolWithoutSessions) {
		sa.add(f, keySessionID.String(req.SessionID))
	}
	sa.add(f, KeyCallID.String(req.CallID))
	if isHTTP(req.Transport) {
		if a := clientAddressFrom(ctx); a != nil {
			sa.add(f, keyClientAddress.String(a.host))
			if a.port > 0 {
				sa.add(f, keyClientPort.Int(a.port))
			}
		}
	}
	if in.cfg.args != nil && req.Arguments.Len() > 0 {
		if red := in.redact(ctx, req, argsRedactorFault, func() json.RawMessage { return in.cfg.args(req.Tool, req.Arguments.JSON()) }); red != nil {
			sa.add(f, keyToolCallArguments.String(string(red)))
		}
	}
	span.SetAttributes(sa.slice()...)
	// The series' attributes are the cache's: clearing this call's own
	// is enough for the pool not to keep its values alive.
	clear(sa.kv[len(s.spanAttrs):sa.n])
	sa.n = 0
	attrPool.Put(sa)
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
func (in *interceptor) parent(ctx context.Context, req *toolctx.Request, version string) (context.Context, []trace.Link) {
	prop := in.cfg.prop
	orig := ctx
	if metaCarrier(req.Meta).readable(version) {
		mctx := prop.Extract(ctx, metaCarrier(req.Meta))
		if sc := trace.SpanContextFromContext(mctx); sc.IsValid() {
			if ambient := trace.SpanContextFromContext(orig); !sc.Equal(ambient) {
				if ambient.IsValid() {
					return mctx, []trace.Link{{SpanContext: ambient}}
				}
				return mctx, nil
			}
		}
		ctx = mctx // baggage, if any
	}
	if len(req.Header) > 0 {
		hctx := prop.Extract(ctx, propagation.HeaderCarrier(req.Header))
		if sc := trace.SpanContextFromContext(hctx); sc.IsValid() {
			if ambient := trace.SpanContextFromContext(orig); !sc.Equal(ambient) {
				if ambient.IsValid() && ambient.TraceID() == sc.TraceID() {
					return trace.ContextWithSpanContext(hctx, ambient), nil
				}
				return hctx, nil
			}
		}
		ctx = hctx
	}
	return ctx, nil
}

// finish ends the span and records the measurement of a call that ended
// with res; start is the call's start on the interceptor's clock, s its
// series.
func (in *interceptor) finish(ctx context.Context, span trace.Span, measure bool, start time.Duration, s *series, version string, req *toolctx.Request, res *toolctx.CallResult) {
	var o toolctx.Outcome
	if res.Failed() {
		o = toolctx.Classify(ctx, res, in.cfg.normalizer)
	}
	if span != nil {
		in.endSpan(ctx, span, o, req, res)
	}
	if o.Failed && o.Public.Code == errs.CodeUnknownTool {
		// The name is the client's, not a tool's: its series is not kept,
		// so that invented names do not fill the cache.
		in.series.drop(seriesKey{tool: req.Tool, version: version, transport: req.Transport})
	}
	if in.metrics {
		in.countNotes(ctx, req, o, res)
	}
	if measure {
		d := time.Since(in.epoch) - start
		opts := s.metric
		if o.Failed {
			opts = in.failedSeriesOf(req, version, o).metric
		}
		in.hist.Record(ctx, d.Seconds(), opts...)
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

func (in *interceptor) endSpan(ctx context.Context, span trace.Span, o toolctx.Outcome, req *toolctx.Request, res *toolctx.CallResult) {
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
		if red := in.redact(ctx, req, resultRedactorFault, func() json.RawMessage { return in.cfg.result(req.Tool, res) }); red != nil {
			kv := keyToolCallResult.String(string(red))
			if f == nil || f(kv) {
				span.SetAttributes(kv)
			}
		}
	}
	span.End()
}

// What the fallback logger is told of a redactor that panicked.
const (
	argsRedactorFault   = "toolmw/otelmw: the arguments redactor panicked; no arguments recorded"
	resultRedactorFault = "toolmw/otelmw: the result redactor panicked; no result recorded"
)

// redact returns what a redactor gives; one that panics gives nil, so
// nothing is recorded, and its panic is reported once to the fallback
// logger as msg.
func (in *interceptor) redact(ctx context.Context, req *toolctx.Request, msg string, red func() json.RawMessage) (out json.RawMessage) {
	safecall.Reporter{Logger: in.cfg.fallback, Describe: errs.Describe}.Call(ctx, msg,
		func() { out = red() },
		func() []slog.Attr {
			return []slog.Attr{slog.String("call_id", req.CallID), slog.String("tool", req.Tool)}
		})
	return out
}

// seriesKey identifies a series of calls: everything that what is cached
// of them is computed from. code is "" for the calls as they start (and
// succeed), a failure's public code otherwise.
type seriesKey struct {
	tool      string // "" for an unknown tool's failure
	version   string
	transport toolctx.Transport
	code      errs.Code
}

// series is what is computed once for the calls of a series.
type series struct {
	// spanName is "tools/call {gen_ai.tool.name}".
	spanName string
	// spanAttrs are the attributes every span of the series has (the
	// filter applied): mcp.method.name, gen_ai.operation.name,
	// gen_ai.tool.name, mcp.protocol.version, network.transport,
	// network.protocol.name. Never changed once cached.
	spanAttrs []attribute.KeyValue
	// metric is the measurement's options: its attribute set.
	metric []metric.RecordOption
}

// seriesOf returns the series of calls starting with k (k.code is ""),
// cached. Past the cache's bound it is computed on every call.
func (in *interceptor) seriesOf(k seriesKey) *series {
	if s, ok := in.series.get(k); ok {
		return s
	}
	f := in.cfg.filter
	var a callAttrs
	a.kv[0] = attrMethod
	a.n = 1
	a.add(f, attrOperation)
	a.add(f, keyToolName.String(k.tool))
	if k.version != "" {
		a.add(f, keyProtocolVersion.String(k.version))
	}
	if t := networkTransport(k.transport); t.Valid() {
		a.add(f, t)
	}
	if isHTTP(k.transport) {
		a.add(f, attrHTTP)
	}
	s := &series{
		spanName:  methodToolsCall + " " + k.tool,
		spanAttrs: append([]attribute.KeyValue(nil), a.slice()...),
	}
	ma := slices.Clone(s.spanAttrs) // NewSet sorts its argument
	if k.tool == "" {
		// No tool: the span says so (gen_ai.tool.name ""), the metric
		// leaves the attribute out, as for an unknown tool.
		ma = slices.DeleteFunc(ma, func(kv attribute.KeyValue) bool { return kv.Key == keyToolName })
	}
	s.metric = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(ma...))}
	in.series.put(k, s)
	return s
}

// failedSeriesOf returns the series of a failed call, for its metric:
// cached per tool, version, transport and code.
func (in *interceptor) failedSeriesOf(req *toolctx.Request, version string, o toolctx.Outcome) *series {
	k := seriesKey{tool: req.Tool, version: version, transport: req.Transport, code: o.Public.Code}
	if k.code == errs.CodeUnknownTool {
		k.tool = "" // the client's choice: unbounded
	}
	if s, ok := in.series.get(k); ok {
		return s
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
	fl := failureOf(o)
	ma.add(f, fl.code)
	if fl.hasError {
		ma.add(f, fl.errType)
	}
	if fl.rpcCode.Valid() {
		ma.add(f, fl.rpcCode)
	}
	s := &series{metric: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(ma.slice()...))}}
	in.series.put(k, s)
	return s
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
	if strings.HasPrefix(key, toolctx.ReservedMetaPrefix) {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

// readable reports whether m may have a key a propagator can read (Get
// and Keys never show one under the protocol's reserved prefix). It is
// false only when m is empty or holds nothing but the protocol version
// (version is protocolVersion's answer): extracting would find nothing.
// It does not range over m: that costs more than the extraction it saves.
func (m metaCarrier) readable(version string) bool {
	switch len(m) {
	case 0:
		return false
	case 1:
		if version != "" {
			_, ok := m[metaProtocolVersion]
			return !ok
		}
	}
	return true
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

// guardKey identifies a series of toolmw.guard.would_reject (cache false:
// value is the guard) or of toolmw.cache.lookups (cache true: value is hit
// or miss).
type guardKey struct {
	cache       bool
	value, tool string
}

// countNotes adds one to toolmw.guard.would_reject for each would_reject
// note of res (one per observed guard that would have stopped the call),
// and one to toolmw.cache.lookups for its cache note.
func (in *interceptor) countNotes(ctx context.Context, req *toolctx.Request, o toolctx.Outcome, res *toolctx.CallResult) {
	for _, n := range res.Notes() {
		var c metric.Int64Counter
		k := guardKey{value: n.Value, tool: req.Tool}
		switch n.Key {
		case middleware.NoteWouldReject:
			c = in.wouldReject
		case middleware.NoteCache:
			c, k.cache = in.cacheLookups, true
		default:
			continue
		}
		if !c.Enabled(ctx) {
			continue
		}
		if o.Failed && o.Public.Code == errs.CodeUnknownTool {
			k.tool = "" // the client's choice: unbounded
		}
		opts, ok := in.guards.get(k)
		if !ok {
			f := in.cfg.filter
			var a callAttrs
			a.kv[0] = attrMethod
			a.n = 1
			if k.cache {
				a.add(f, KeyCacheResult.String(k.value))
			} else {
				a.add(f, KeyGuard.String(k.value))
			}
			if k.tool != "" {
				a.add(f, keyToolName.String(k.tool))
			}
			opts = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(a.slice()...))}
			in.guards.put(k, opts)
		}
		c.Add(ctx, 1, opts...)
	}
}
