package audit_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

var okResult = toolctx.TextResult("ok")

func okHandler(context.Context, *toolctx.Request) *toolctx.CallResult { return okResult }

func benchReq() *toolctx.Request {
	return &toolctx.Request{Tool: "search", CallID: "c-1", SessionID: "s-1", Transport: toolctx.TransportStdio,
		Identity: &toolctx.Identity{Subject: "alice"}}
}

// discardSink takes every batch at once.
var discardSink = audit.SinkFunc(func(context.Context, []audit.Record) error { return nil })

// BenchmarkCallBaseline is a successful call through a bare After with a
// no-op hook: what the audit interceptor adds is the difference from
// BenchmarkCallWithAudit.
func BenchmarkCallBaseline(b *testing.B) {
	h, _ := middleware.New(middleware.After(func(context.Context, middleware.CallInfo) {})).ThenFunc(okHandler)
	req, ctx := benchReq(), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h.CallTool(ctx, req)
	}
}

// BenchmarkCallWithAudit is a successful call through the audit
// interceptor into an Async writer (Drop policy, large queue, a sink that
// discards): building the Record and enqueuing it.
func BenchmarkCallWithAudit(b *testing.B) {
	w := audit.NewAsync(discardSink, audit.AsyncConfig{QueueSize: 1 << 16, BatchSize: 1024, Policy: audit.Drop, FallbackLogger: discardLogger(nil)})
	defer w.Close(context.Background())
	h, _ := middleware.New(audit.Interceptor(w)).ThenFunc(okHandler)
	req, ctx := benchReq(), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h.CallTool(ctx, req)
	}
	b.StopTimer()
	if d := w.Stats().Dropped; d > uint64(b.N)/100 {
		b.Logf("dropped %d of %d (the writer fell behind)", d, b.N)
	}
}

// BenchmarkCallWithAuditParallel is BenchmarkCallWithAudit from GOMAXPROCS
// goroutines.
func BenchmarkCallWithAuditParallel(b *testing.B) {
	w := audit.NewAsync(discardSink, audit.AsyncConfig{QueueSize: 1 << 16, BatchSize: 1024, Policy: audit.Drop, FallbackLogger: discardLogger(nil)})
	defer w.Close(context.Background())
	h, _ := middleware.New(audit.Interceptor(w)).ThenFunc(okHandler)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer() // the queue's slots are allocated once, in NewAsync
	b.RunParallel(func(pb *testing.PB) {
		req := benchReq()
		for pb.Next() {
			h.CallTool(ctx, req)
		}
	})
}

// BenchmarkAsyncEmit is one Emit of a Record into the queue.
func BenchmarkAsyncEmit(b *testing.B) {
	w := audit.NewAsync(discardSink, audit.AsyncConfig{QueueSize: 1 << 16, BatchSize: 1024, Policy: audit.Drop, FallbackLogger: discardLogger(nil)})
	defer w.Close(context.Background())
	r := row(1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		w.Emit(ctx, r)
	}
}

// BenchmarkAsyncStalledSink emits into a writer whose sink never returns
// (Drop policy): the cost of a full queue, and the heap stays flat.
func BenchmarkAsyncStalledSink(b *testing.B) {
	s := &stallSink{release: make(chan struct{})}
	w := audit.NewAsync(s, audit.AsyncConfig{QueueSize: 4096, Policy: audit.Drop, FallbackLogger: discardLogger(nil)})
	r := row(1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		w.Emit(ctx, r)
	}
	b.StopTimer()
	close(s.release)
	_ = w.Close(context.Background())
}

// BenchmarkCallWithAuditNoopEmitter builds each row and hands it to an
// emitter that does nothing: the cost of the row without the queue.
func BenchmarkCallWithAuditNoopEmitter(b *testing.B) {
	h, _ := middleware.New(audit.Interceptor(audit.EmitterFunc(func(context.Context, audit.Record) {}))).ThenFunc(okHandler)
	req, ctx := benchReq(), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h.CallTool(ctx, req)
	}
}

// BenchmarkSlogSinkRow is one audit row as the recommended chain writes it
// for a successful mcp-go call in process (the fields the interceptor
// fills), through a SlogSink into a text handler on io.Discard, next to
// the floor: the same attributes handed to the same handler by
// slog.Logger.LogAttrs, which is what any slog line of them costs. The
// difference is what the sink adds (its record and the attribute list).
//
//	go test -run '^$' -bench SlogSinkRow -benchmem ./audit/
func BenchmarkSlogSinkRow(b *testing.B) {
	row := audit.Record{
		Time: time.Now(), Kind: audit.KindTool, CallID: "0123456789ab-42", Transport: string(toolctx.TransportInMemory),
		Tool: "echo", Outcome: audit.OutcomeOK, Duration: 3 * time.Microsecond, ResponseBytes: 5, ContentBlocks: 1,
	}
	h := slog.NewTextHandler(io.Discard, nil)
	ctx := context.Background()
	b.Run("sink", func(b *testing.B) {
		s := audit.NewSlogSink(h)
		batch := []audit.Record{row}
		b.ReportAllocs()
		for b.Loop() {
			if err := s.WriteBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("slog-floor", func(b *testing.B) {
		l := slog.New(h)
		attrs := row.Attrs()[1:] // the record carries the time, as the sink's does
		b.ReportAllocs()
		for b.Loop() {
			l.LogAttrs(ctx, slog.LevelInfo, audit.SlogMessage, attrs...)
		}
	})
}
