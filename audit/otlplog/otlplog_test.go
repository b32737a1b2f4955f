package otlplog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/otlplog"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newSink(t *testing.T, endpoint string, opts otlplog.Config) *otlplog.Sink {
	t.Helper()
	s, err := otlplog.New(context.Background(), endpoint, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

var start = time.Date(2026, 12, 1, 19, 0, 0, 123456789, time.UTC)

// toolRow is a failed tool call's row with every field a tool row has.
func toolRow() audit.Record {
	return audit.Record{
		Time: start, Kind: audit.KindTool, CallID: "call-1", RequestID: "req-1", SessionID: "sess-1",
		Transport: string(toolctx.TransportStreamableHTTP), Tool: "sales_report", Subject: "alice", TaskID: "task-9",
		Outcome: audit.OutcomeError, Code: errs.CodeInternal, Message: "dial tcp 10.0.0.7:5432: connection refused",
		Detail: map[string]any{"retry_after_ms": int64(1500), "missing_scopes": []string{"a", "b"},
			"nested": map[string]any{"x": 1.5, "ok": true, "list": []any{"s", 2.0, nil}}},
		Duration:   1500 * time.Millisecond,
		ClientMeta: map[string]any{"client": "demo", "n": 3.0},
		Arguments:  json.RawMessage(`{"region":"eu"}`),
		Notes:      []toolctx.Note{{Key: "attempts", Value: "3"}, {Key: "would_reject", Value: "rate_limit"}},
		TraceID:    "0102030405060708090a0b0c0d0e0f10", SpanID: "1112131415161718",
	}
}

// The record a collector decodes carries the row: its time, severity, the
// event name and body, the trace and span ids in the record's own fields,
// the conventions' attribute names where they have one and the toolmw.
// prefix for the rest.
func TestRecordShape(t *testing.T) {
	rcv := newReceiver(t)
	rcv.up()
	res := resource.NewSchemaless(attribute.String("service.name", "toolmw-test"))
	sink := newSink(t, rcv.url(), otlplog.Config{Resource: res, Headers: map[string]string{"X-Api-Key": "k1"}})

	httpRow := audit.Record{Time: start.Add(time.Second), Kind: audit.KindHTTP, RequestID: "req-2", Method: "POST",
		Path: "/mcp", Status: 503, Outcome: audit.OutcomeError, Code: errs.CodeUnavailable, Duration: 2 * time.Millisecond}
	okRow := audit.Record{Time: start, Kind: audit.KindTool, CallID: "call-3", Tool: "greet", Outcome: audit.OutcomeOK,
		Transport: string(toolctx.TransportStdio)}
	unknown := audit.Record{Time: start, Kind: audit.KindTool, CallID: "call-4", Tool: "nope", Outcome: audit.OutcomeRejected,
		Code: errs.CodeUnknownTool, Message: "unknown tool \"nope\""}
	require.NoError(t, sink.WriteBatch(context.Background(), []audit.Record{toolRow(), httpRow, okRow, unknown}))

	got := rcv.waitRecords(4)
	require.Len(t, got, 4)
	for _, g := range got {
		assert.Equal(t, "/v1/logs", g.path)
		assert.Equal(t, "k1", g.header.Get("X-Api-Key"))
		assert.Equal(t, otlplog.ScopeName, g.scope)
		assert.Equal(t, "toolmw-test", g.resource["service.name"])
		assert.Equal(t, otlplog.EventName, g.rec.EventName)
		assert.Equal(t, audit.SlogMessage, anyValue(g.rec.Body))
	}

	tool := got[0].rec
	assert.Equal(t, uint64(start.UnixNano()), tool.TimeUnixNano)
	assert.NotZero(t, tool.ObservedTimeUnixNano)
	assert.Equal(t, logpb.SeverityNumber_SEVERITY_NUMBER_ERROR, tool.SeverityNumber)
	assert.Equal(t, "ERROR", tool.SeverityText)
	assert.Equal(t, "0102030405060708090a0b0c0d0e0f10", hexID(tool.TraceId))
	assert.Equal(t, "1112131415161718", hexID(tool.SpanId))
	assert.Equal(t, map[string]any{
		"toolmw.kind":       "tool",
		"mcp.method.name":   "tools/call",
		"gen_ai.tool.name":  "sales_report",
		"toolmw.call.id":    "call-1",
		"toolmw.request.id": "req-1",
		"mcp.session.id":    "sess-1",
		"toolmw.transport":  "streamable-http",
		"enduser.id":        "alice",
		"toolmw.task.id":    "task-9",
		"toolmw.outcome":    "error",
		"toolmw.error.code": "internal",
		"error.type":        "tool_error",
		"toolmw.message":    "dial tcp 10.0.0.7:5432: connection refused",
		"toolmw.duration":   1.5,
		"toolmw.detail": map[string]any{"retry_after_ms": int64(1500), "missing_scopes": []any{"a", "b"},
			"nested": map[string]any{"x": 1.5, "ok": true, "list": []any{"s", 2.0, nil}}},
		"toolmw.client_meta": map[string]any{"client": "demo", "n": 3.0},
		"toolmw.arguments":   `{"region":"eu"}`,
		"toolmw.notes":       map[string]any{"attempts": "3", "would_reject": "rate_limit"},
	}, attrs(tool.Attributes))

	h := got[1].rec
	assert.Equal(t, logpb.SeverityNumber_SEVERITY_NUMBER_ERROR, h.SeverityNumber)
	assert.Empty(t, h.TraceId)
	assert.Equal(t, map[string]any{
		"toolmw.kind": "http", "toolmw.request.id": "req-2", "http.request.method": "POST", "url.path": "/mcp",
		"http.response.status_code": int64(503), "toolmw.outcome": "error", "toolmw.error.code": "unavailable",
		"error.type": "503", "toolmw.duration": 0.002,
	}, attrs(h.Attributes))

	ok := got[2].rec
	assert.Equal(t, logpb.SeverityNumber_SEVERITY_NUMBER_INFO, ok.SeverityNumber)
	assert.Equal(t, "INFO", ok.SeverityText)
	okAttrs := attrs(ok.Attributes)
	assert.NotContains(t, okAttrs, "error.type", "a success has no error.type")
	assert.NotContains(t, okAttrs, "toolmw.message")
	assert.Equal(t, "ok", okAttrs["toolmw.outcome"])

	u := attrs(got[3].rec.Attributes)
	assert.Equal(t, "-32602", u["error.type"], "an unknown tool is the JSON-RPC code, as on otelmw's span")
	assert.Equal(t, logpb.SeverityNumber_SEVERITY_NUMBER_WARN, got[3].rec.SeverityNumber)
}

// A row through the audit interceptor reaches the receiver with what the
// interceptor recorded: the raw message where the caller's was scrubbed.
func TestThroughInterceptor(t *testing.T) {
	rcv := newReceiver(t)
	rcv.up()
	sink := newSink(t, rcv.url()+"/custom/logs", otlplog.Config{Gzip: true})
	w := audit.NewAsync(sink, audit.AsyncConfig{FlushInterval: 10 * time.Millisecond, FallbackLogger: discard()})
	h := audit.Interceptor(w)(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(fmt.Errorf("backend: password=hunter2 rejected"))
	}))
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "t", CallID: "c-1", Transport: toolctx.TransportStdio})
	require.True(t, res.Failed())
	require.NoError(t, w.Close(context.Background()))
	got := rcv.waitRecords(1)
	assert.True(t, got[0].gzip)
	assert.Equal(t, "/custom/logs", got[0].path)
	a := attrs(got[0].rec.Attributes)
	assert.Equal(t, "backend: password=hunter2 rejected", a["toolmw.message"])
	assert.Equal(t, "c-1", a["toolmw.call.id"])
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// callIDs returns the call ids of the records, and how many were seen
// twice.
func callIDs(t *testing.T, got []received) (map[string]bool, int) {
	t.Helper()
	ids, dup := make(map[string]bool, len(got)), 0
	for _, g := range got {
		id, _ := attrs(g.rec.Attributes)["toolmw.call.id"].(string)
		require.NotEmpty(t, id)
		if ids[id] {
			dup++
		}
		ids[id] = true
	}
	return ids, dup
}

// burst emits n rows through w, as n calls would, and waits until the
// writer has accounted for every one (spooled, written or dropped).
func burst(t *testing.T, w *audit.Async, n int) {
	t.Helper()
	for i := range n {
		w.Emit(context.Background(), audit.Record{Time: start, Kind: audit.KindTool, Tool: "greet",
			CallID: fmt.Sprintf("call-%05d", i), Outcome: audit.OutcomeOK, Transport: "stdio",
			ClientMeta: map[string]any{"pad": strings.Repeat("x", 100)}})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := w.Stats()
		if st.Queued == 0 && st.Spooled+st.Written+st.Dropped+st.Fallback >= uint64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer did not account for %d rows in 30 s: %+v", n, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A burst while the receiver is down goes to the spool (the receiver
// refuses connections: every export fails); when it is back, the spool is
// replayed and every row arrives exactly once. Nothing is dropped, nothing
// goes to the fallback.
func TestBurstWhileReceiverDown(t *testing.T) {
	rcv := newReceiver(t) // down
	// Generous timeouts: a request the receiver took but the client gave up
	// on would be sent again (at least once), and this test counts exactly.
	sink := newSink(t, rcv.url(), otlplog.Config{Timeout: time.Minute})
	spool, err := audit.OpenSpool(t.TempDir(), audit.SpoolConfig{FallbackLogger: discard()})
	require.NoError(t, err)
	w := audit.NewAsync(sink, audit.AsyncConfig{Spool: spool, BatchSize: 100, FlushInterval: 10 * time.Millisecond,
		Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, WriteTimeout: time.Minute, FallbackLogger: discard()})

	const n = 3000
	burst(t, w, n)
	st := w.Stats()
	assert.Equal(t, uint64(n), st.Spooled, "every row of the burst is in the spool: %+v", st)
	assert.Zero(t, st.Written)
	assert.Zero(t, st.Dropped)
	assert.Equal(t, n, st.SpoolRows)
	assert.Empty(t, rcv.got())

	rcv.up()
	rcv.waitRecords(n)
	require.NoError(t, w.Close(context.Background()), "the spool is empty at Close")
	got := rcv.got()
	ids, dup := callIDs(t, got)
	assert.Len(t, ids, n, "every row arrived")
	assert.Zero(t, dup, "no row arrived twice: the receiver never took a refused request")
	st = w.Stats()
	assert.Equal(t, uint64(n), st.Replayed)
	assert.Zero(t, st.Dropped+st.Fallback)
	assert.Zero(t, st.SpoolRows)
}

// With a spool smaller than the burst, what the spool could not hold is
// dropped and counted, and every row it held arrives: the loss is exactly
// Stats.Dropped, no more.
func TestBurstBeyondTheSpool(t *testing.T) {
	rcv := newReceiver(t)                                               // down
	sink := newSink(t, rcv.url(), otlplog.Config{Timeout: time.Minute}) // see TestBurstWhileReceiverDown
	spool, err := audit.OpenSpool(t.TempDir(), audit.SpoolConfig{MaxBytes: 96 << 10, FallbackLogger: discard()})
	require.NoError(t, err)
	w := audit.NewAsync(sink, audit.AsyncConfig{Spool: spool, BatchSize: 50, FlushInterval: 10 * time.Millisecond,
		Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, WriteTimeout: time.Minute, FallbackLogger: discard()})

	const n = 3000
	burst(t, w, n)
	st := w.Stats()
	require.NotZero(t, st.Dropped, "the spool cannot hold the burst: %+v", st)
	require.NotZero(t, st.Spooled)
	assert.Equal(t, uint64(n), st.Spooled+st.Dropped, "each row is spooled or counted as dropped")
	assert.Zero(t, st.Fallback)

	rcv.up()
	rcv.waitRecords(int(st.Spooled))
	require.NoError(t, w.Close(context.Background()))
	got := rcv.got()
	ids, dup := callIDs(t, got)
	assert.Zero(t, dup)
	assert.Len(t, ids, int(st.Spooled), "every spooled row arrived")
	assert.Equal(t, n, len(ids)+int(w.Stats().Dropped), "lost = dropped, exactly")
}

// A failure status is an error (the batch is spooled and sent again); a
// partial success is not (the receiver took the request), and is logged.
func TestAnswers(t *testing.T) {
	rcv := newReceiver(t)
	rcv.up()
	var logged bytes.Buffer
	sink := newSink(t, rcv.url(), otlplog.Config{FallbackLogger: slog.New(slog.NewTextHandler(&logged, nil))})
	row := []audit.Record{toolRow()}

	for _, status := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusBadRequest, http.StatusNotFound} {
		rcv.mu.Lock()
		rcv.answer = func(w http.ResponseWriter) { http.Error(w, "no", status) }
		rcv.mu.Unlock()
		err := sink.WriteBatch(context.Background(), row)
		require.Error(t, err, "status %d", status)
		assert.Contains(t, err.Error(), "otlplog: export of 1 rows")
	}

	rcv.mu.Lock()
	rcv.answer = func(w http.ResponseWriter) {
		out, _ := proto.Marshal(&collogpb.ExportLogsServiceResponse{PartialSuccess: &collogpb.ExportLogsPartialSuccess{
			RejectedLogRecords: 1, ErrorMessage: "attribute too long"}})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}
	rcv.mu.Unlock()
	require.NoError(t, sink.WriteBatch(context.Background(), row), "a partial success has been taken")
	assert.Contains(t, logged.String(), "the receiver rejected some audit records")
	assert.Contains(t, logged.String(), "attribute too long")

	require.NoError(t, sink.Close(context.Background()))
	require.NoError(t, sink.Close(context.Background()), "Close is idempotent")
	require.ErrorContains(t, sink.WriteBatch(context.Background(), row), "closed")
}

// An unreachable receiver answers at once (connection refused), well
// within the timeout.
func TestUnreachableIsAnError(t *testing.T) {
	rcv := newReceiver(t) // down
	sink := newSink(t, rcv.url(), otlplog.Config{})
	err := sink.WriteBatch(context.Background(), []audit.Record{toolRow()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connection refused")
}

func TestNewRejectsBadEndpoints(t *testing.T) {
	for endpoint, want := range map[string]string{
		"127.0.0.1:4318":             "is not a URL (want one such as http://127.0.0.1:4318)",
		"grpc://127.0.0.1:4317":      "must be an http:// or https:// URL",
		"http://":                    "has no host",
		"http://127.0.0.1:4318/?a=b": "must not have a query",
		"http://[::1":                "is not a URL",
	} {
		_, err := otlplog.New(context.Background(), endpoint, otlplog.Config{})
		require.Error(t, err, endpoint)
		assert.Contains(t, err.Error(), want, endpoint)
	}
	_, err := otlplog.New(context.Background(), "http://127.0.0.1:4318", otlplog.Config{Timeout: -time.Second})
	require.ErrorContains(t, err, "Timeout must not be negative")
}

// A receiver that answers 413 to a request over its size limit is not
// retried forever: the batch is split until its parts fit, every row that
// fits arrives once, and the one row too large on its own goes to the
// fallback sink with the receiver's refusal, counted in Stats.Refused.
func TestTooLargeIsSplit(t *testing.T) {
	rcv := newReceiver(t)
	rcv.maxBody = 32 << 10
	rcv.up()
	sink := newSink(t, rcv.url(), otlplog.Config{Timeout: time.Minute})
	spool, err := audit.OpenSpool(t.TempDir(), audit.SpoolConfig{FallbackLogger: discard()})
	require.NoError(t, err)
	fb := &fallbackRows{}
	w := audit.NewAsync(sink, audit.AsyncConfig{Spool: spool, BatchSize: 400, FlushInterval: time.Hour,
		Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, WriteTimeout: time.Minute,
		Limits: audit.Limits{ClientMeta: 1 << 20}, Fallback: fb, FallbackLogger: discard()})

	const n = 400
	for i := range n {
		pad := strings.Repeat("x", 100)
		if i == 137 {
			pad = strings.Repeat("y", 64<<10) // over the receiver's limit alone
		}
		w.Emit(context.Background(), audit.Record{Time: start, Kind: audit.KindTool, Tool: "greet",
			CallID: fmt.Sprintf("call-%05d", i), Outcome: audit.OutcomeOK, Transport: "stdio",
			ClientMeta: map[string]any{"pad": pad}})
	}
	// The queue holds one full batch: it is written as a whole first.
	rcv.waitRecords(n - 1)
	require.NoError(t, w.Close(context.Background()))

	ids, dup := callIDs(t, rcv.got())
	assert.Zero(t, dup, "no row arrived twice")
	assert.Len(t, ids, n-1, "every row that fits arrived")
	assert.False(t, ids["call-00137"], "the row over the limit did not")
	st := w.Stats()
	assert.Equal(t, uint64(1), st.Refused, "%+v", st)
	assert.Equal(t, uint64(1), st.Fallback, "%+v", st)
	assert.Zero(t, st.Dropped)
	assert.Zero(t, st.SpoolRows, "the spool is empty: the refused row did not block it")
	got := fb.get()
	require.Len(t, got, 1)
	assert.Equal(t, "call-00137", got[0].CallID)
	assert.Contains(t, noteValue(got[0], audit.NoteRefused), "413")
	rcv.mu.Lock()
	refused := rcv.refused
	rcv.mu.Unlock()
	assert.Less(t, refused, 40, "bisection, not one request per row")
}

// fallbackRows is a fallback sink that keeps what it is given.
type fallbackRows struct {
	mu   sync.Mutex
	rows []audit.Record
}

func (f *fallbackRows) WriteBatch(_ context.Context, batch []audit.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = append(f.rows, batch...)
	return nil
}

func (f *fallbackRows) get() []audit.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.rows)
}

func noteValue(r audit.Record, key string) string {
	for _, n := range r.Notes {
		if n.Key == key {
			return n.Value
		}
	}
	return ""
}
