package otlplog

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
)

// ScopeName is the instrumentation scope of the log records.
const ScopeName = "github.com/toolmw/toolmw/audit/otlplog"

// EventName is the event name of every log record the sink writes.
const EventName = "toolmw.audit"

// Prefix is the namespace of the attributes that have no name in the
// semantic conventions.
const Prefix = "toolmw."

// DefaultPath is the URL path of OTLP/HTTP logs, used when the endpoint
// has none.
const DefaultPath = "/v1/logs"

// Config configures [New]. The zero value gives the defaults.
type Config struct {
	// Headers are sent with every export request (an API key, say).
	Headers map[string]string
	// Timeout bounds one export request. Default 10s. Behind
	// [audit.Async], its WriteTimeout bounds the write too.
	Timeout time.Duration
	// Gzip compresses the requests.
	Gzip bool
	// TLS is the client's TLS configuration for an https endpoint.
	// Default: the system's roots.
	TLS *tls.Config
	// Resource describes the process the rows come from (service.name,
	// host.name, ...). Default: resource.Default(), which reads
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
	Resource *resource.Resource
	// FallbackLogger is where the sink reports the records a receiver
	// took but rejected (an OTLP partial success). Default slog.Default().
	FallbackLogger *slog.Logger
}

// Sink writes audit rows to an OTLP/HTTP logs receiver; see the package
// documentation for the record's shape and for delivery. It is safe for
// concurrent use (writes are serialized). Create one with [New]; Close it
// after the [audit.Async] in front of it.
type Sink struct {
	mu        sync.Mutex // one export at a time, as the exporter asks
	exporter  *otlploghttp.Exporter
	provider  *sdklog.LoggerProvider
	logger    otellog.Logger
	collected *collector
	transport *statusTransport
	client    *http.Client
	fallback  *slog.Logger
	closed    bool
}

// New returns a sink that exports to endpoint, an http or https URL such
// as "http://127.0.0.1:4318" (the path [DefaultPath] is added when the URL
// has none) or "https://collector.example:4318/v1/logs". A URL that is not
// one is an error naming it. The exporter's other settings not given in
// opts are read from the OTEL_EXPORTER_OTLP_* environment variables, as
// otlploghttp documents; the endpoint is always the one given here.
func New(ctx context.Context, endpoint string, opts Config) (*Sink, error) {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return nil, fmt.Errorf("otlplog: the endpoint %q is not a URL (want one such as http://127.0.0.1:4318): %v", endpoint, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("otlplog: the endpoint %q must be an http:// or https:// URL, such as http://127.0.0.1:4318", endpoint)
	case u.Host == "":
		return nil, fmt.Errorf("otlplog: the endpoint %q has no host", endpoint)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("otlplog: the endpoint %q must not have a query or fragment", endpoint)
	case opts.Timeout < 0:
		return nil, fmt.Errorf("otlplog: Config.Timeout must not be negative, got %v", opts.Timeout)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = DefaultPath
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	if opts.TLS != nil {
		base.TLSClientConfig = opts.TLS.Clone()
	}
	st := &statusTransport{base: base}
	client := &http.Client{Transport: st, Timeout: timeout}
	eopts := []otlploghttp.Option{
		otlploghttp.WithEndpointURL(u.String()),
		otlploghttp.WithHTTPClient(client),
		otlploghttp.WithTimeout(timeout),
		// The spool retries, with backoff, for as long as it takes: an
		// exporter retrying on its own would hold the writer for a minute.
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}),
	}
	if len(opts.Headers) > 0 {
		eopts = append(eopts, otlploghttp.WithHeaders(opts.Headers))
	}
	if opts.Gzip {
		eopts = append(eopts, otlploghttp.WithCompression(otlploghttp.GzipCompression))
	}
	exp, err := otlploghttp.New(ctx, eopts...)
	if err != nil {
		return nil, fmt.Errorf("otlplog: cannot create the OTLP/HTTP exporter for %q: %w", endpoint, err)
	}
	res := opts.Resource
	if res == nil {
		res = resource.Default()
	}
	col := &collector{}
	provider := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(col))
	fallback := opts.FallbackLogger
	if fallback == nil {
		fallback = slog.Default()
	}
	return &Sink{
		exporter:  exp,
		provider:  provider,
		logger:    provider.Logger(ScopeName, otellog.WithSchemaURL(semconv.SchemaURL)),
		collected: col,
		transport: st,
		client:    client,
		fallback:  fallback,
	}, nil
}

// WriteBatch exports batch as one request and returns when the receiver
// has answered. It returns an error when the receiver did not take the
// request (unreachable, a failure status, no answer within the timeout),
// so that [audit.Async] spools the batch and sends it again; a receiver
// that took the request but rejected records (a partial success) is
// logged, not returned. After Close it returns an error.
func (s *Sink) WriteBatch(ctx context.Context, batch []audit.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("otlplog: the sink is closed")
	}
	if len(batch) == 0 {
		return nil
	}
	col := s.collected
	col.records = slices.Grow(col.records[:0], len(batch))
	for i := range batch {
		r := &batch[i]
		s.logger.Emit(spanContext(ctx, r), logRecord(r))
	}
	s.transport.reset()
	err := s.exporter.Export(ctx, col.records)
	clear(col.records) // the records hold the rows' strings and maps
	col.records = col.records[:0]
	if err != nil && s.transport.accepted() {
		// The receiver answered 2xx: it has the request. What it rejected
		// it would reject again.
		s.fallback.LogAttrs(ctx, slog.LevelError, "toolmw/audit/otlplog: the receiver rejected some audit records",
			slog.Int("rows", len(batch)), slog.String("error", err.Error()))
		return nil
	}
	if err != nil && s.transport.status() == http.StatusRequestEntityTooLarge {
		// The receiver takes requests up to a size: this one is over it.
		// It would refuse the same rows again, so the batch is split (see
		// audit.ErrRowRefused) until the rows fit, and a single row still
		// over the size goes to the fallback sink, counted.
		return fmt.Errorf("otlplog: export of %d rows: the receiver refused the request as too large (HTTP 413): %w: %w",
			len(batch), audit.ErrRowRefused, err)
	}
	if err != nil {
		return fmt.Errorf("otlplog: export of %d rows: %w", len(batch), err)
	}
	return nil
}

// Close shuts the exporter down and closes its idle connections. The sink
// holds no rows of its own (every write is sent before WriteBatch
// returns), so there is nothing left to flush here: Close the
// [audit.Async] in front of it first, which flushes its queue into the
// sink. Close is idempotent.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := errors.Join(s.provider.Shutdown(ctx), s.exporter.Shutdown(ctx))
	s.client.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("otlplog: close: %w", err)
	}
	return nil
}

// collector is the provider's one processor: it keeps the records the
// logger builds, for WriteBatch to export. It is used under Sink.mu only.
type collector struct {
	records []sdklog.Record
}

func (c *collector) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.records = append(c.records, r.Clone())
	return nil
}

func (*collector) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (*collector) Shutdown(context.Context) error                         { return nil }
func (*collector) ForceFlush(context.Context) error                       { return nil }

// statusTransport remembers the status of the last request's answer (0:
// none). It is used under Sink.mu only (the exporter's retries are off:
// one request per export).
type statusTransport struct {
	base *http.Transport
	mu   sync.Mutex
	code int
}

func (t *statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		t.mu.Lock()
		t.code = resp.StatusCode
		t.mu.Unlock()
	}
	return resp, err
}

func (t *statusTransport) reset() {
	t.mu.Lock()
	t.code = 0
	t.mu.Unlock()
}

func (t *statusTransport) status() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.code
}

// accepted reports whether the last answer was a 2xx.
func (t *statusTransport) accepted() bool {
	c := t.status()
	return c >= 200 && c <= 299
}

// spanContext returns ctx carrying the row's trace and span ids, which the
// SDK copies into the record's own fields.
func spanContext(ctx context.Context, r *audit.Record) context.Context {
	if r.TraceID == "" || r.SpanID == "" {
		return trace.ContextWithSpanContext(ctx, trace.SpanContext{}) // not the caller's span
	}
	tid, err1 := trace.TraceIDFromHex(r.TraceID)
	sid, err2 := trace.SpanIDFromHex(r.SpanID)
	if err1 != nil || err2 != nil {
		return trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	}
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
}

// The attribute keys.
var (
	keyToolName       = semconv.GenAIToolNameKey
	keyMethodName     = semconv.McpMethodNameKey
	keySessionID      = semconv.McpSessionIDKey
	keyErrorType      = semconv.ErrorTypeKey
	keyEnduserID      = semconv.EnduserIDKey
	keyHTTPMethod     = semconv.HTTPRequestMethodKey
	keyURLPath        = semconv.URLPathKey
	keyHTTPStatusCode = semconv.HTTPResponseStatusCodeKey

	keyKind       = attribute.Key(Prefix + "kind")
	keyCallID     = attribute.Key(Prefix + "call.id")
	keyRequestID  = attribute.Key(Prefix + "request.id")
	keyTransport  = attribute.Key(Prefix + "transport")
	keyTaskID     = attribute.Key(Prefix + "task.id")
	keyOutcome    = attribute.Key(Prefix + "outcome")
	keyErrorCode  = attribute.Key(Prefix + "error.code")
	keyMessage    = attribute.Key(Prefix + "message")
	keyDuration   = attribute.Key(Prefix + "duration")
	keyDetail     = attribute.Key(Prefix + "detail")
	keyClientMeta = attribute.Key(Prefix + "client_meta")
	keyArguments  = attribute.Key(Prefix + "arguments")
	keyNotes      = attribute.Key(Prefix + "notes")
)

// methodToolsCall is the mcp.method.name of a tool call, and
// errorTypeToolError the error.type of a failed one, as otelmw records
// them.
const (
	methodToolsCall    = "tools/call"
	errorTypeToolError = "tool_error"
)

// logRecord is the row as an API log record.
func logRecord(r *audit.Record) otellog.Record {
	var rec otellog.Record
	rec.SetTimestamp(r.Time)
	rec.SetEventName(EventName)
	rec.SetBody(attribute.StringValue(audit.SlogMessage))
	lvl := r.Level()
	rec.SetSeverity(severity(lvl))
	rec.SetSeverityText(lvl.String())

	var buf [24]attribute.KeyValue
	a := buf[:0]
	str := func(k attribute.Key, v string) {
		if v != "" {
			a = append(a, k.String(v))
		}
	}
	str(keyKind, string(r.Kind))
	if r.Kind == audit.KindTool {
		a = append(a, keyMethodName.String(methodToolsCall))
	}
	str(keyToolName, r.Tool)
	str(keyCallID, r.CallID)
	str(keyRequestID, r.RequestID)
	str(keySessionID, r.SessionID)
	str(keyTransport, r.Transport)
	str(keyEnduserID, r.Subject)
	str(keyTaskID, r.TaskID)
	str(keyHTTPMethod, r.Method)
	str(keyURLPath, r.Path)
	if r.Status != 0 {
		a = append(a, keyHTTPStatusCode.Int(r.Status))
	}
	str(keyOutcome, string(r.Outcome))
	str(keyErrorCode, string(r.Code))
	if r.Failed() {
		str(keyErrorType, errorType(r))
	}
	str(keyMessage, r.Message)
	a = append(a, keyDuration.Float64(r.Duration.Seconds()))
	if len(r.Detail) > 0 {
		a = append(a, attribute.KeyValue{Key: keyDetail, Value: mapValue(r.Detail, 0)})
	}
	if len(r.ClientMeta) > 0 {
		a = append(a, attribute.KeyValue{Key: keyClientMeta, Value: mapValue(r.ClientMeta, 0)})
	}
	if len(r.Arguments) > 0 {
		a = append(a, keyArguments.String(string(r.Arguments)))
	}
	if len(r.Notes) > 0 {
		notes := make([]attribute.KeyValue, len(r.Notes))
		for i, n := range r.Notes {
			notes[i] = attribute.String(n.Key, n.Value)
		}
		a = append(a, attribute.KeyValue{Key: keyNotes, Value: attribute.MapValue(notes...)})
	}
	rec.AddAttributes(a...)
	return rec
}

// errorType is error.type for a failed row: as otelmw's span has it for a
// tool call, the status code for an HTTP request.
func errorType(r *audit.Record) string {
	if r.Kind == audit.KindHTTP {
		if r.Status != 0 {
			return strconv.Itoa(r.Status)
		}
		return string(r.Code)
	}
	switch r.Code {
	case errs.CodeUnknownTool, errs.CodeInvalidRequest:
		if jc, ok := r.Code.JSONRPC(); ok {
			return strconv.Itoa(jc)
		}
	}
	return errorTypeToolError
}

func severity(l slog.Level) otellog.Severity {
	switch {
	case l >= slog.LevelError:
		return otellog.SeverityError
	case l >= slog.LevelWarn:
		return otellog.SeverityWarn
	case l >= slog.LevelInfo:
		return otellog.SeverityInfo
	}
	return otellog.SeverityDebug
}

// maxDepth is how deep a map or list is converted; below, a value is its
// JSON text.
const maxDepth = 8

// mapValue converts a JSON-shaped map, keys sorted.
func mapValue(m map[string]any, depth int) attribute.Value {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kvs := make([]attribute.KeyValue, len(keys))
	for i, k := range keys {
		kvs[i] = attribute.KeyValue{Key: attribute.Key(k), Value: value(m[k], depth+1)}
	}
	return attribute.MapValue(kvs...)
}

// value converts one JSON-shaped value (what encoding/json decodes, and
// the Go values a detail is built of).
func value(v any, depth int) attribute.Value {
	switch v := v.(type) {
	case nil:
		return attribute.Value{}
	case string:
		return attribute.StringValue(v)
	case bool:
		return attribute.BoolValue(v)
	case float64:
		return attribute.Float64Value(v)
	case float32:
		return attribute.Float64Value(float64(v))
	case int:
		return attribute.IntValue(v)
	case int64:
		return attribute.Int64Value(v)
	case int32:
		return attribute.Int64Value(int64(v))
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return attribute.Int64Value(i)
		}
		return attribute.StringValue(v.String())
	case []string:
		return attribute.StringSliceValue(v)
	}
	if depth < maxDepth {
		switch v := v.(type) {
		case map[string]any:
			return mapValue(v, depth)
		case []any:
			vals := make([]attribute.Value, len(v))
			for i, e := range v {
				vals[i] = value(e, depth+1)
			}
			return attribute.SliceValue(vals...)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return attribute.StringValue(errs.Describe(v))
	}
	return attribute.StringValue(string(b))
}
