package otelmw_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware/otelmw"
)

// tableRow is one row of the behaviour table, as a call and what its span
// and measurement must say.
type tableRow struct {
	name   string
	tool   string
	args   map[string]any
	code   errs.Code // "" for success
	status string    // the span's status description (the public message); prefix match
	// notError: a protocol rejection the conventions do not count as an
	// error (no error.type, status unset), with its JSON-RPC code.
	notError string
	cancel   bool
}

var table = []tableRow{
	{name: "ok", tool: "greet", args: map[string]any{"name": "Ada"}},
	{name: "invalid arguments", tool: "divide", args: map[string]any{"a": 1, "b": "two"}, code: errs.CodeInvalidArguments, status: "invalid arguments"},
	{name: "public error", tool: "lookup", args: map[string]any{}, code: errs.CodeNotFound, status: "order 42 does not exist"},
	{name: "raw error", tool: "report", args: map[string]any{}, code: errs.CodeInternal, status: errs.GenericMessage},
	{name: "panic", tool: "crash", args: map[string]any{}, code: errs.CodeInternal, status: errs.GenericMessage},
	{name: "timeout", tool: "slow", args: map[string]any{}, code: errs.CodeTimeout, status: "the tool call timed out"},
	{name: "canceled", tool: "block", args: map[string]any{}, code: errs.CodeCanceled, status: "the tool call was canceled", cancel: true},
	{name: "unknown tool", tool: "no_such_tool", args: map[string]any{}, code: errs.CodeUnknownTool, notError: "-32602"},
}

// callRow makes the call of row r and waits for its span.
func callRow(t *testing.T, s *server, c client, r tableRow, meta map[string]any) sdktrace.ReadOnlySpan {
	t.Helper()
	before := len(s.tel.spans.Ended())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r.cancel {
		callCtx, stop := context.WithCancel(ctx)
		go func() {
			select {
			case <-s.blocking:
			case <-ctx.Done():
			}
			stop()
		}()
		// What the client gets of a cancelled call depends on the SDK (an
		// error, or mcp-go's in-process canceled result): not checked here.
		_, _ = c.call(callCtx, r.tool, r.args, meta)
	} else {
		isError, err := c.call(ctx, r.tool, r.args, meta)
		if r.notError != "" {
			require.Error(t, err, "%s: a protocol error", r.name)
		} else {
			require.NoError(t, err, "%s: a result", r.name)
			assert.Equal(t, r.code != "", isError, "%s: isError", r.name)
		}
	}
	spans := s.tel.waitSpans(t, before+1)
	require.Len(t, spans, before+1, "%s: exactly one span per call", r.name)
	return spans[before]
}

func TestBehaviourTableSpansAndMetric(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			tel := newTelemetry(t)
			s := newChain(t, tel)
			c := fx.open(t, s)
			for _, r := range table {
				span := callRow(t, s, c, r, nil)
				checkSpan(t, fx, s, r, span)
			}
			checkHistogram(t, fx, s)
		})
	}
}

func checkSpan(t *testing.T, fx fixture, s *server, r tableRow, span sdktrace.ReadOnlySpan) {
	t.Helper()
	a := attrs(span.Attributes())
	msg := fmt.Sprintf("%s %s", fx.name, r.name)

	assert.Equal(t, trace.SpanKindServer, span.SpanKind(), "%s: a SERVER span", msg)
	wantName := "tools/call " + r.tool
	if r.code == errs.CodeUnknownTool {
		wantName = "tools/call" // the client's name is not a low-cardinality target
	}
	assert.Equal(t, wantName, span.Name(), "%s: span name", msg)
	assert.Equal(t, "tools/call", a["mcp.method.name"], "%s: mcp.method.name", msg)
	assert.Equal(t, "execute_tool", a["gen_ai.operation.name"], "%s: gen_ai.operation.name", msg)
	assert.Equal(t, r.tool, a["gen_ai.tool.name"], "%s: gen_ai.tool.name", msg)

	callID, _ := a["toolmw.call.id"].(string)
	require.NotEmpty(t, callID, "%s: toolmw.call.id", msg)
	req, ok := s.reqs.byID(callID)
	require.True(t, ok, "%s: toolmw.call.id is the Request's CallID", msg)

	// mcp.protocol.version: the _meta's of a 2026-07-28 client, else the
	// HTTP header.
	version, _ := req.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	if version == "" && req.Header != nil {
		version = req.Header.Get("Mcp-Protocol-Version")
	}
	if fx.http {
		assert.NotEmpty(t, version, "%s: an HTTP client always tells its protocol version", msg)
	}
	if version != "" {
		assert.Equal(t, version, a["mcp.protocol.version"], "%s: mcp.protocol.version", msg)
	} else {
		assert.NotContains(t, a, "mcp.protocol.version", "%s: no version known", msg)
	}
	// mcp.session.id: never for 2026-07-28 and later.
	if req.SessionID != "" && (version == "" || version < "2026-07-28") {
		assert.Equal(t, req.SessionID, a["mcp.session.id"], "%s: mcp.session.id", msg)
	} else {
		assert.NotContains(t, a, "mcp.session.id", "%s: no mcp.session.id (session %q, protocol %q)", msg, req.SessionID, version)
	}
	assert.NotContains(t, a, "jsonrpc.request.id", "%s: neither SDK exposes the JSON-RPC id", msg)

	if fx.http {
		assert.Equal(t, "tcp", a["network.transport"], "%s: network.transport", msg)
		assert.Equal(t, "http", a["network.protocol.name"], "%s: network.protocol.name", msg)
		assert.Equal(t, "127.0.0.1", a["client.address"], "%s: client.address", msg)
		port, _ := a["client.port"].(int64)
		assert.Positive(t, port, "%s: client.port", msg)
	} else {
		for _, k := range []string{"network.transport", "network.protocol.name", "client.address", "client.port"} {
			assert.NotContains(t, a, k, "%s: no %s in process", msg, k)
		}
	}

	switch {
	case r.code == "":
		assert.Equal(t, codes.Unset, span.Status().Code, "%s: a success leaves the status unset", msg)
		for _, k := range []string{"error.type", "toolmw.error.code", "rpc.response.status_code"} {
			assert.NotContains(t, a, k, "%s: no %s on success", msg, k)
		}
	case r.notError != "":
		assert.Equal(t, codes.Unset, span.Status().Code, "%s: not an error per the conventions", msg)
		assert.NotContains(t, a, "error.type", "%s: no error.type", msg)
		assert.Equal(t, r.notError, a["rpc.response.status_code"], "%s: rpc.response.status_code", msg)
		assert.Equal(t, string(r.code), a["toolmw.error.code"], "%s: toolmw.error.code", msg)
	default:
		assert.Equal(t, codes.Error, span.Status().Code, "%s: status Error", msg)
		assert.True(t, strings.HasPrefix(span.Status().Description, r.status), "%s: status description %q is the public message %q", msg, span.Status().Description, r.status)
		assert.Equal(t, "tool_error", a["error.type"], "%s: error.type", msg)
		assert.Equal(t, string(r.code), a["toolmw.error.code"], "%s: toolmw.error.code", msg)
		assert.NotContains(t, a, "rpc.response.status_code", "%s: an isError result has no JSON-RPC code", msg)
	}
	assertNoCanary(t, span, msg)

	// The audit row of the call names the span.
	var found bool
	for _, row := range s.rows.all() {
		if row.CallID == callID {
			found = true
			assert.Equal(t, span.SpanContext().TraceID().String(), row.TraceID, "%s: the row's trace id", msg)
			assert.Equal(t, span.SpanContext().SpanID().String(), row.SpanID, "%s: the row's span id", msg)
		}
	}
	assert.True(t, found, "%s: an audit row for the call", msg)
}

// assertNoCanary checks every exported field of the span for the raw cause.
func assertNoCanary(t *testing.T, span sdktrace.ReadOnlySpan, msg string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%v|", span.Name(), span.Status().Description, span.Attributes())
	for _, ev := range span.Events() {
		fmt.Fprintf(&b, "%s|%v|", ev.Name, ev.Attributes)
	}
	for _, l := range span.Links() {
		fmt.Fprintf(&b, "%v|", l.Attributes)
	}
	assert.NotContains(t, b.String(), "CANARY", "%s: no raw cause in the span", msg)
}

func checkHistogram(t *testing.T, fx fixture, s *server) {
	t.Helper()
	points := s.tel.waitHistogram(t, uint64(len(table))) // one measurement per call
	require.Len(t, points, len(table), "%s: one series per row", fx.name)
	for _, r := range table {
		msg := fmt.Sprintf("%s %s", fx.name, r.name)
		idx := -1
		for i, pt := range points {
			a := attrs(pt.Attributes.ToSlice())
			if r.code == errs.CodeUnknownTool {
				if a["toolmw.error.code"] == string(errs.CodeUnknownTool) {
					idx = i
				}
			} else if a["gen_ai.tool.name"] == r.tool {
				idx = i
			}
		}
		require.GreaterOrEqual(t, idx, 0, "%s: a data point", msg)
		pt := points[idx]
		assert.Equal(t, uint64(1), pt.Count, "%s: one measurement", msg)
		assert.Equal(t, otelmw.BucketBoundaries(), pt.Bounds, "%s: the conventions' bucket boundaries", msg)
		assert.Equal(t, []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}, pt.Bounds, "%s: boundaries as the conventions list them", msg)
		a := attrs(pt.Attributes.ToSlice())
		want := map[string]any{"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool"}
		if r.code != errs.CodeUnknownTool {
			want["gen_ai.tool.name"] = r.tool
		}
		if v, ok := a["mcp.protocol.version"]; ok {
			want["mcp.protocol.version"] = v // checked against the request on the span
		}
		if fx.http {
			want["network.transport"] = "tcp"
			want["network.protocol.name"] = "http"
		}
		switch {
		case r.code == "":
		case r.notError != "":
			want["toolmw.error.code"] = string(r.code)
			want["rpc.response.status_code"] = r.notError
		default:
			want["toolmw.error.code"] = string(r.code)
			want["error.type"] = "tool_error"
		}
		assert.Equal(t, want, a, "%s: the histogram's attributes (low cardinality: no session, no call id)", msg)
	}
}
