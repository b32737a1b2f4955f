package otelmw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolmw/toolmw/toolctx"
)

// Sessions records mcp.server.session.duration, the MCP semantic
// conventions' session metric: a histogram, in seconds, of how long each
// session lasted as the server saw it, with the conventions' bucket
// boundaries ([BucketBoundaries]) and their attributes:
//
//   - mcp.protocol.version, the version the session negotiated, when known;
//   - network.transport (pipe on stdio, tcp on streamable HTTP and SSE) and
//     network.protocol.name (http on those);
//   - error.type, if and only if the session ended with an error:
//     "timeout" when the error is (or wraps) context.DeadlineExceeded,
//     "_OTHER" (the conventions' fallback) for any other.
//
// jsonrpc.protocol.version is always 2.0, which the conventions ask to
// leave out, and network.protocol.version is not known to either SDK: both
// are not set.
//
// Neither SDK tells middleware when a session starts or ends, so the
// server wires it: [Sessions.Start] when a session is established (the
// initialize handshake of a protocol version before 2026-07-28, or a stdio
// connection), and [Session.End] when it closes. On go-sdk, a receiving
// middleware does both (see the package example); on mcp-go, the hooks
// AddAfterInitialize and AddOnUnregisterSession. Stateless streamable
// HTTP, and clients of 2026-07-28 and later, have no sessions: record none.
// Create one with [NewSessions].
type Sessions struct {
	hist    metric.Float64Histogram
	filter  AttributeFilter
	epoch   time.Time
	enabled bool
}

// SessionStart describes a session as it starts, for [Sessions.Start].
type SessionStart struct {
	// Transport is the session's transport.
	Transport toolctx.Transport
	// ProtocolVersion is the MCP protocol version the session negotiated
	// (mcp.protocol.version); empty when not known.
	ProtocolVersion string
}

// SessionEnd says how a session ended, for [Session.End].
type SessionEnd struct {
	// Err is what the session ended with; nil (or io.EOF) when it closed
	// normally: the client closed it, or the server did.
	Err error
}

// Session is one session being measured; [Session.End] records it.
type Session struct {
	s     *Sessions
	start time.Duration
	attrs []attribute.KeyValue
	ended atomic.Bool
}

// NewSessions returns the recorder of mcp.server.session.duration. Of
// [New]'s options, [WithMeterProvider] (default: the global provider) and
// [WithAttributeFilter] apply; any other is an error, and so is a meter
// that refuses the histogram. With the no-op meter provider
// (go.opentelemetry.io/otel/metric/noop) it records nothing.
func NewSessions(opts ...Option) (*Sessions, error) {
	c := &config{}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("otelmw: NewSessions was given a nil Option")
		}
		o(c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.tp != nil || c.prop != nil || c.args != nil || c.result != nil || c.rawCause || c.stack ||
		!reflect.ValueOf(c.normalizer).IsZero() {
		return nil, errors.New("otelmw: NewSessions takes only WithMeterProvider and WithAttributeFilter: the other options are for the calls' spans (New)")
	}
	mp := c.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	s := &Sessions{filter: c.filter, epoch: time.Now()}
	if _, noop := mp.(metricnoop.MeterProvider); noop {
		return s, nil
	}
	meter := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	h, err := meter.Float64Histogram(metricSessionName,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP session as observed on the MCP server."),
		metric.WithExplicitBucketBoundaries(bucketBoundaries...))
	if err != nil {
		return nil, fmt.Errorf("otelmw: cannot create the %s histogram: %w", metricSessionName, err)
	}
	s.hist, s.enabled = h, true
	return s, nil
}

// Start records that a session starts now and returns it; call End on it
// once it ends. It reads the clock once and never blocks.
func (s *Sessions) Start(st SessionStart) *Session {
	ss := &Session{s: s}
	if !s.enabled {
		return ss
	}
	ss.start = time.Since(s.epoch)
	add := func(kv attribute.KeyValue) {
		if s.filter == nil || s.filter(kv) {
			ss.attrs = append(ss.attrs, kv)
		}
	}
	if isRevision(st.ProtocolVersion) {
		add(keyProtocolVersion.String(st.ProtocolVersion))
	}
	if t := networkTransport(st.Transport); t.Valid() {
		add(t)
	}
	if isHTTP(st.Transport) {
		add(attrHTTP)
	}
	return ss
}

// End records the session's duration, from Start to now, with error.type
// when it ended with an error. Only the first End of a session records;
// the others do nothing.
func (ss *Session) End(ctx context.Context, e SessionEnd) {
	if ss == nil || !ss.s.enabled || ss.ended.Swap(true) {
		return
	}
	d := time.Since(ss.s.epoch) - ss.start
	attrs := ss.attrs
	if t := sessionErrorType(e.Err); t != "" {
		kv := keyErrorType.String(t)
		if f := ss.s.filter; f == nil || f(kv) {
			attrs = append(attrs[:len(attrs):len(attrs)], kv)
		}
	}
	ss.s.hist.Record(ctx, d.Seconds(), metric.WithAttributes(attrs...))
}

// sessionErrorType is the error.type of a session that ended with err: ""
// for a normal end.
func sessionErrorType(err error) string {
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return errorTypeOther
}
