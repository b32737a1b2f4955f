package audit_test

import (
	"context"
	"testing"

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
