package otelmw

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// Option configures [New].
type Option func(*config)

// ResultRedactor returns what may be recorded of a successful call's result
// as gen_ai.tool.call.result: redacted JSON, or nil to record none. It sees
// the public fields of the result; it must not change res. A redactor that
// panics records nothing, and its panic is reported once to the fallback
// logger ([WithFallbackLogger]), as for a [middleware.ArgumentsRedactor].
type ResultRedactor func(tool string, res *toolctx.CallResult) json.RawMessage

// AttributeFilter reports whether an attribute may be recorded on the span
// and the metric. It never sees mcp.method.name, which the conventions
// require. One that panics records nothing of the attribute, and its panic
// is reported to the fallback logger ([WithFallbackLogger]).
type AttributeFilter func(attribute.KeyValue) bool

type config struct {
	tp         trace.TracerProvider
	mp         metric.MeterProvider
	prop       propagation.TextMapPropagator
	filter     AttributeFilter
	args       middleware.ArgumentsRedactor
	result     ResultRedactor
	normalizer errs.Normalizer
	fallback   *slog.Logger
	rawCause   bool
	stack      bool

	err error
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// WithTracerProvider sets where spans go. Default: the global provider
// (otel.GetTracerProvider) at the time of [New]; the global one forwards to
// a provider set later with otel.SetTracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp == nil {
			c.fail(errors.New("otelmw: WithTracerProvider(nil): pass a provider, or leave the option out for the global one"))
			return
		}
		c.tp = tp
	}
}

// WithMeterProvider sets where the mcp.server.operation.duration histogram
// goes. Default: the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp == nil {
			c.fail(errors.New("otelmw: WithMeterProvider(nil): pass a provider, or leave the option out for the global one"))
			return
		}
		c.mp = mp
	}
}

// WithPropagator sets how the client's trace context is read: from the
// call's params._meta (traceparent, tracestate, baggage, unprefixed, per
// SEP-414 and the MCP conventions), else from the HTTP request's headers.
// Default: the global propagator (otel.GetTextMapPropagator), which reads
// nothing until one is set with otel.SetTextMapPropagator, for example
//
//	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(
//		propagation.TraceContext{}, propagation.Baggage{}))
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) {
		if p == nil {
			c.fail(errors.New("otelmw: WithPropagator(nil): pass a propagator, or leave the option out for the global one"))
			return
		}
		c.prop = p
	}
}

// WithAttributeFilter records only the attributes keep accepts, on the span
// and on the metric (mcp.method.name, which the conventions require, is
// always recorded). Use it to drop, say, gen_ai.tool.name from the metric of
// a server with very many tools, or mcp.session.id.
func WithAttributeFilter(keep AttributeFilter) Option {
	return func(c *config) {
		if keep == nil {
			c.fail(errors.New("otelmw: WithAttributeFilter(nil): pass a filter, or leave the option out to record every attribute"))
			return
		}
		c.filter = containedFilter(keep, c)
	}
}

// containedFilter is keep with a panic in it stopped, as every user hook's
// is: the attribute is not recorded, and the panic is reported to c's
// fallback logger (read when it happens, so that the options' order does
// not matter) with the attribute's key, never its value.
func containedFilter(keep AttributeFilter, c *config) AttributeFilter {
	return func(kv attribute.KeyValue) (ok bool) {
		var s safecall.Scope
		defer s.Stop(func(f safecall.Fault) {
			ok = false
			safecall.Reporter{Logger: c.fallback, Describe: errs.Describe}.Report(context.Background(),
				"toolmw/otelmw: the attribute filter panicked; the attribute is not recorded", f,
				slog.String("attribute", string(kv.Key)))
		})
		ok = keep(kv)
		s.Returned()
		return ok
	}
}

// WithArguments records the call's arguments on the span, as
// gen_ai.tool.call.arguments (an opt-in attribute of the conventions), as
// redact returns them. Without it no argument is ever recorded.
func WithArguments(redact middleware.ArgumentsRedactor) Option {
	return func(c *config) {
		if redact == nil {
			c.fail(errors.New("otelmw: WithArguments(nil): pass a redactor"))
			return
		}
		c.args = redact
	}
}

// WithResult records a successful call's result on the span, as
// gen_ai.tool.call.result (an opt-in attribute of the conventions), as
// redact returns it. Without it no result is ever recorded.
func WithResult(redact ResultRedactor) Option {
	return func(c *config) {
		if redact == nil {
			c.fail(errors.New("otelmw: WithResult(nil): pass a redactor"))
			return
		}
		c.result = redact
	}
}

// WithRawCause adds a span event "exception" with the raw message
// (exception.message) and the Go type of the cause (exception.type) to the
// span of a call whose failure was scrubbed: an internal error, a panic, a
// raw error after the call's context ended. By default the span carries the
// public code and message only, because trace backends are often a third
// party's service. The panic stack is left out unless [WithPanicStack] is
// also given.
func WithRawCause() Option {
	return func(c *config) { c.rawCause = true }
}

// WithPanicStack adds the panic's stack (exception.stacktrace) to the event
// [WithRawCause] records for a panic. It needs WithRawCause: without it,
// [New] returns an error.
func WithPanicStack() Option {
	return func(c *config) { c.stack = true }
}

// WithFallbackLogger sets where a redactor's panic is reported (the call
// then records nothing of what it redacts). Default: slog.Default() at the
// time of the report.
func WithFallbackLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.fail(errors.New("otelmw: WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()"))
			return
		}
		c.fallback = l
	}
}

// WithNormalizer sets the rules used to classify a result that was not
// normalized yet (when middleware.Normalize is not inside the interceptor).
// Use the chain's normalizer. Default: errs.Normalizer{}.
func WithNormalizer(n errs.Normalizer) Option {
	return func(c *config) { c.normalizer = n }
}
