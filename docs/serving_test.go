package docs_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	slogmulti "github.com/samber/slog-multi"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// One slog-multi composition for every log line (docs/serving.md).
func Example_logging() {
	var logFile *os.File
	// doc:begin logging
	handlers := []slog.Handler{slog.NewTextHandler(os.Stderr, nil)} // for a person
	if logFile != nil {
		handlers = append(handlers, slog.NewJSONHandler(logFile, nil)) // for a machine
	}
	logger := slog.New(slogmulti.Pipe(slogmulti.RecoverHandlerError(
		func(ctx context.Context, r slog.Record, err error) { /* say so once, on stderr */ },
	)).Handler(slogmulti.Fanout(handlers...)))
	// doc:end logging
	_ = logger
}

// go-sdk's SSE handler behind mcpsdk.SSE (docs/transports.md).
func Example_sse() {
	server := mcp.NewServer(&mcp.Implementation{Name: "demo"}, nil)
	// doc:begin sse
	http.Handle("/sse", mcpsdk.SSE(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	// doc:end sse
}

// otelmw outermost, the audit row naming its span (docs/otel.md).
func Example_otel() {
	var (
		w      audit.Emitter
		report middleware.DiagnosticsFunc
	)
	run := func() error {
		// doc:begin otel
		otel, err := otelmw.New() // the global providers and propagator, or WithTracerProvider, WithMeterProvider, WithPropagator
		if err != nil {
			return err
		}
		chain := middleware.New(
			otel,                 // outermost: the span covers the whole chain
			audit.Interceptor(w), // Record.TraceID and SpanID name the span
			middleware.Diagnostics(report),
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
		)
		// On HTTP, otelmw.ClientAddress in front of the SDK's handler adds client.address/port.
		// doc:end otel
		_ = chain
		return nil
	}
	_ = run
}
