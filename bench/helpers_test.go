package bench

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// discardLogger formats every record as text and throws it away: the same
// work a real logger does, without the I/O. Both SDKs' own logging
// middleware and toolmw's sinks log through one of these.
func discardLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// discardSink takes every batch at once without looking at it.
var discardSink = audit.SinkFunc(func(context.Context, []audit.Record) error { return nil })

// newAsync is the audit writer of the full chain: the recommended Drop
// policy (a call never waits for the sink), in front of sink.
func newAsync(tb testing.TB, sink audit.Sink, cfg audit.AsyncOptions) *audit.Async {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	if cfg.Fallback == nil {
		cfg.Fallback = discardSink
	}
	w := audit.NewAsync(sink, cfg)
	tb.Cleanup(func() { _ = w.Close(context.Background()) })
	return w
}

// fullChain is toolmw's recommended chain, outermost first: audit into e,
// Diagnostics (logging the raw cause), Normalize, Recover.
func fullChain(e audit.Emitter) middleware.Chain {
	diag := discardLogger()
	return middleware.New(
		audit.Interceptor(e),
		middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
			diag.LogAttrs(ctx, slog.LevelError, "tool failed", slog.String("tool", ev.Details.Tool()), slog.Any("err", ev.Cause()))
		}),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
}

// fullChainSlog is fullChain with the audit rows going through an async
// writer into a slog sink that formats each row as text and discards it:
// the same work as the SDKs' own logging middleware, moved off the call.
func fullChainSlog(tb testing.TB) toolctx.Middleware {
	w := newAsync(tb, audit.NewSlogSink(slog.NewTextHandler(io.Discard, nil)), audit.AsyncOptions{Policy: audit.Drop})
	return fullChain(w).Middleware()
}
