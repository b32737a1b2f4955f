package main

// The demo's OpenTelemetry export: -metrics-addr serves the
// mcp.server.operation.duration histogram as Prometheus text at /metrics,
// -otlp-endpoint sends the tool calls' spans over OTLP/HTTP. Without either
// flag the chain has no OpenTelemetry interceptor at all.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

// telemetryConfig is what the telemetry flags say.
type telemetryConfig struct {
	metricsAddr  string
	otlpEndpoint string
}

func addTelemetryFlags(fs *flag.FlagSet, c *telemetryConfig) {
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve Prometheus metrics (mcp.server.operation.duration) at http://`address`/metrics (host:port; port 0 picks a free one)")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", "", "send the tool calls' spans over OTLP/HTTP to this `URL` (e.g. http://127.0.0.1:4318; the path defaults to /v1/traces)")
}

// check reports a bad telemetry flag, before anything is opened.
func (c telemetryConfig) check() error {
	if c.otlpEndpoint == "" {
		return nil
	}
	u, err := url.Parse(c.otlpEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Sprintf("-otlp-endpoint must be an http:// or https:// URL such as http://127.0.0.1:4318, not %q", c.otlpEndpoint)}
	}
	return nil
}

// telemetry is the running export: the interceptor for the chain, and what
// to stop at shutdown.
type telemetry struct {
	mw      toolctx.Middleware
	metrics *http.Server
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	logger  *slog.Logger
}

// startTelemetry starts what the flags ask for and says where on out (the
// banner's writer: stderr under -stdio, whose stdout is the MCP stream).
func startTelemetry(ctx context.Context, c telemetryConfig, out io.Writer, logger *slog.Logger) (*telemetry, error) {
	t := &telemetry{logger: logger}
	if c.metricsAddr == "" && c.otlpEndpoint == "" {
		return t, nil
	}
	res := resource.NewSchemaless(semconv.ServiceName("toolmw-demo"))
	var mp metric.MeterProvider = metricnoop.NewMeterProvider()
	var tp trace.TracerProvider = tracenoop.NewTracerProvider()
	if c.metricsAddr != "" {
		ln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			hint := "pass -metrics-addr with another host:port"
			if errors.Is(err, syscall.EADDRINUSE) {
				hint = "another process is using it: pass -metrics-addr with another port"
			}
			return nil, fmt.Errorf("cannot listen on %s for metrics: %v (%s)", c.metricsAddr, err, hint)
		}
		reg := promclient.NewRegistry()
		exp, err := prometheus.New(prometheus.WithRegisterer(reg), prometheus.WithoutScopeInfo())
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("cannot start the Prometheus exporter: %w", err)
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res))
		mp = t.mp
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		t.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := t.metrics.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("metrics server stopped", "err", err)
			}
		}()
		fmt.Fprintf(out, "metrics: Prometheus text at http://%s/metrics\n", ln.Addr())
	}
	if c.otlpEndpoint != "" {
		endpoint := c.otlpEndpoint
		if u, err := url.Parse(endpoint); err == nil && (u.Path == "" || u.Path == "/") {
			// The exporter would post to "/": the collectors' traces path.
			u.Path = "/v1/traces"
			endpoint = u.String()
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
		if err != nil {
			t.close()
			return nil, fmt.Errorf("cannot start the OTLP trace exporter for %s: %w", c.otlpEndpoint, err)
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		tp = t.tp
		fmt.Fprintf(out, "traces: OTLP/HTTP to %s\n", endpoint)
	}
	mw, err := otelmw.New(otelmw.WithTracerProvider(tp), otelmw.WithMeterProvider(mp),
		otelmw.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
	if err != nil {
		t.close()
		return nil, err
	}
	t.mw = mw
	return t, nil
}

// middleware is the chain's OpenTelemetry interceptor: none without the
// flags (or without a telemetry at all).
func (t *telemetry) middleware() toolctx.Middleware {
	if t == nil || t.mw == nil {
		return func(next toolctx.Handler) toolctx.Handler { return next }
	}
	return t.mw
}

// close flushes the spans still queued and stops the metrics server.
func (t *telemetry) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if t.tp != nil {
		if err := t.tp.Shutdown(ctx); err != nil {
			t.logger.Error("flushing the spans", "err", err)
		}
	}
	if t.metrics != nil {
		_ = t.metrics.Shutdown(ctx)
	}
	if t.mp != nil {
		_ = t.mp.Shutdown(ctx)
	}
}
