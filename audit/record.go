package audit

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Kind says what a [Record] describes.
type Kind string

// The kinds of row.
const (
	// KindTool is one tool call, written by [Interceptor].
	KindTool Kind = "tool"
	// KindHTTP is one HTTP request, written by [HTTP].
	KindHTTP Kind = "http"
)

// RowOutcome is the outcome column of a row: how a call or request ended,
// as one word of a small closed set, stable as strings, so queries and
// dashboards may match on them. It is the row's label, made from the call's
// [toolctx.Outcome] (the classification every hook receives) and its cause.
type RowOutcome string

// The outcomes.
const (
	// OutcomeOK: the call succeeded (HTTP: a status below 400).
	OutcomeOK RowOutcome = "ok"
	// OutcomeError: the call failed after it was accepted, with a public
	// error (the row holds its public message) or an internal one (the row
	// holds the raw message).
	OutcomeError RowOutcome = "error"
	// OutcomeRejected: the call was refused before doing its work: unknown
	// tool, malformed request, invalid arguments, unauthenticated,
	// permission denied, rate limited or over quota (HTTP: 400, 401, 403,
	// 404, 405, 413, 415 or 429).
	OutcomeRejected RowOutcome = "rejected"
	// OutcomeCanceled: the client cancelled the call.
	OutcomeCanceled RowOutcome = "canceled"
	// OutcomeTimeout: the call ran past its deadline.
	OutcomeTimeout RowOutcome = "timeout"
	// OutcomePanic: a handler or interceptor panicked; the row holds the
	// panic value's message, never the stack.
	OutcomePanic RowOutcome = "panic"
	// OutcomeInputRequired: the round answered that the call needs the
	// client's input first (a multi-round-trip request,
	// [toolctx.InputRequired]); the client's next round has a row of its
	// own.
	OutcomeInputRequired RowOutcome = "input_required"
)

// Outcomes returns every outcome, in a fixed order.
func Outcomes() []RowOutcome {
	return []RowOutcome{OutcomeOK, OutcomeError, OutcomeRejected, OutcomeCanceled, OutcomeTimeout, OutcomePanic, OutcomeInputRequired}
}

// Valid reports whether o is one of [Outcomes].
func (o RowOutcome) Valid() bool {
	switch o {
	case OutcomeOK, OutcomeError, OutcomeRejected, OutcomeCanceled, OutcomeTimeout, OutcomePanic, OutcomeInputRequired:
		return true
	}
	return false
}

// outcomeOf returns the outcome of a failed call from its public code and
// raw cause: [OutcomePanic] when the raw message was scrubbed and the cause
// is an [*errs.PanicError], otherwise by code.
func outcomeOf(code errs.Code, scrubbed bool, cause error) RowOutcome {
	if scrubbed && cause != nil {
		// Not errors.As: the walk must end, and not panic, whatever the
		// cause's Unwrap and As methods do.
		if errs.PanicOf(cause) != nil {
			return OutcomePanic
		}
	}
	switch code {
	case errs.CodeCanceled:
		return OutcomeCanceled
	case errs.CodeTimeout:
		return OutcomeTimeout
	case errs.CodeUnknownTool, errs.CodeInvalidRequest, errs.CodeInvalidArguments,
		errs.CodeUnauthenticated, errs.CodePermissionDenied, errs.CodeRateLimited, errs.CodeQuotaExceeded:
		return OutcomeRejected
	}
	return OutcomeError
}

// Record is one audit row: a tool call ([KindTool]) or an HTTP request
// ([KindHTTP]).
//
// Message is what the caller was told (the public message), except where
// the caller's message was scrubbed (an internal error with a raw cause, a
// panic, or a raw error after the call was cancelled or timed out): there,
// and only there, it is the raw message, so the operator sees the cause.
// It never holds a stack. Arguments are present only when the user opted
// in with a redactor ([WithArguments]); ClientMeta is the
// client-supplied _meta, untrusted, without the protocol's own
// "io.modelcontextprotocol/" keys.
//
// A Record is a plain value that holds no reference to its call: the
// interceptor copies what the row needs (the client's own _meta keys) on
// the call, so a queued row pins neither the arguments nor the result nor
// the SDK's request. Client-supplied fields are cut to [Limits] by
// [Async]. Sinks must not keep references into a row after they return.
type Record struct {
	// Time is when the call or request started.
	Time time.Time
	// Kind is tool or http.
	Kind Kind
	// CallID is the tool call's correlation id (tool rows).
	CallID string
	// RequestID is the HTTP request id, where known.
	RequestID string
	// SessionID is the MCP session id, where the transport has one.
	SessionID string
	// Transport is the MCP transport (tool rows).
	Transport string
	// Tool is the tool's name (tool rows).
	Tool string
	// Subject is the authenticated caller's subject; never a credential.
	Subject string
	// TaskID is the id of the task the call ran as, for a task-augmented
	// call (see [toolctx.Request.TaskID]): the row is then the task's final
	// outcome, written when the task ended. Empty for an ordinary call.
	TaskID string
	// Outcome is how the call ended.
	Outcome RowOutcome
	// Code is the public error code; empty on success.
	Code errs.Code
	// Message is the public message, or the raw message where the caller's
	// was scrubbed; empty on success.
	Message string
	// Detail is the public structured detail of a failure, if any.
	Detail map[string]any
	// Duration is how long the call or request took.
	Duration time.Duration
	// ClientMeta is the client's _meta minus the "io.modelcontextprotocol/"
	// keys. It is untrusted: the client chose every key and value.
	ClientMeta map[string]any
	// Arguments is the redacted JSON of the call's arguments, present only
	// with [WithArguments].
	Arguments json.RawMessage
	// Notes are what interceptors noted of the call on its result
	// ([toolctx.CallResult.WithNote]): "attempts", "cache", "scrubbed",
	// "truncated_from_bytes", ... They never hold a secret. The slice is
	// shared with the result: sinks must not change it.
	Notes []toolctx.Note
	// Method is the HTTP method (HTTP rows).
	Method string
	// Path is the HTTP request path, without the query (HTTP rows).
	Path string
	// Status is the HTTP status code (HTTP rows).
	Status int
	// RequestBytes is the size of the call's arguments: the raw JSON the
	// client sent, as the adapter received it (tool rows).
	RequestBytes int
	// ResponseBytes is the size of the result's payload as the adapter
	// sends it, counted from the result without encoding it again (tool
	// rows): a text block's UTF-8 bytes (before JSON escaping), an image's,
	// audio's or blob's base64 length, a resource link's URI and an
	// embedded text resource's text, plus the structured content's JSON:
	// its length when it is JSON already, as [toolctx.StructuredResult]
	// and typed tools make it; any other value is estimated without
	// encoding it (its maps, slices and strings walked, escapes not
	// counted; every other value, a struct or a json.Marshaler included,
	// as 8 bytes). A failure counts the one text block the caller receives
	// (the public message); an input-required answer counts 0. The JSON-RPC
	// framing, field names, annotations and _meta are not counted.
	ResponseBytes int
	// ContentBlocks is how many content blocks the result sent back had
	// (tool rows): 1 for a failure answered with its public message, 0 for
	// an input-required answer.
	ContentBlocks int
	// TraceID and SpanID name the trace span of the call (32 and 16 hex
	// digits), when a tracing interceptor outside this one (otelmw) had a
	// recording span: join the row with its trace on them. Empty otherwise.
	TraceID string
	SpanID  string
}

// Failed reports whether the row describes a failure.
func (r *Record) Failed() bool {
	return r.Outcome != OutcomeOK && r.Outcome != OutcomeInputRequired && r.Outcome != ""
}

// Attrs returns the row's fields as typed slog attributes; empty fields are
// left out.
func (r *Record) Attrs() []slog.Attr {
	return r.appendAttrs(make([]slog.Attr, 0, maxAttrs), true)
}

// maxAttrs is how many attributes a row has at most.
const maxAttrs = 25

// appendAttrs appends the row's non-empty fields to attrs (the time first
// when withTime is set) and returns the extended slice.
func (r *Record) appendAttrs(attrs []slog.Attr, withTime bool) []slog.Attr {
	if withTime {
		attrs = append(attrs, slog.Time("time", r.Time))
	}
	attrs = append(attrs, slog.String("kind", string(r.Kind)))
	attrs = appendString(attrs, "call_id", r.CallID)
	attrs = appendString(attrs, "request_id", r.RequestID)
	attrs = appendString(attrs, "session_id", r.SessionID)
	attrs = appendString(attrs, "transport", r.Transport)
	attrs = appendString(attrs, "tool", r.Tool)
	attrs = appendString(attrs, "subject", r.Subject)
	attrs = appendString(attrs, "task_id", r.TaskID)
	attrs = appendString(attrs, "method", r.Method)
	attrs = appendString(attrs, "path", r.Path)
	if r.Status != 0 {
		attrs = append(attrs, slog.Int("status", r.Status))
	}
	attrs = appendString(attrs, "outcome", string(r.Outcome))
	attrs = appendString(attrs, "code", string(r.Code))
	attrs = appendString(attrs, "message", r.Message)
	if len(r.Detail) > 0 {
		attrs = append(attrs, slog.Any("detail", r.Detail))
	}
	attrs = append(attrs, slog.Duration("duration", r.Duration))
	if len(r.ClientMeta) > 0 {
		attrs = append(attrs, slog.Any("client_meta", r.ClientMeta))
	}
	if len(r.Arguments) > 0 {
		attrs = append(attrs, slog.String("arguments", string(r.Arguments)))
	}
	if len(r.Notes) > 0 {
		attrs = append(attrs, slog.Any("notes", notesValue(r.Notes)))
	}
	if r.RequestBytes != 0 {
		attrs = append(attrs, slog.Int("request_bytes", r.RequestBytes))
	}
	if r.ResponseBytes != 0 || r.ContentBlocks != 0 {
		attrs = append(attrs, slog.Int("response_bytes", r.ResponseBytes), slog.Int("content_blocks", r.ContentBlocks))
	}
	attrs = appendString(attrs, "trace_id", r.TraceID)
	attrs = appendString(attrs, "span_id", r.SpanID)
	return attrs
}

// responseSize returns a tool row's ResponseBytes and ContentBlocks (see
// [Record]) from the final result and how the call ended, without encoding
// the result but for structured content that is not JSON already.
func responseSize(res *toolctx.CallResult, o *toolctx.Outcome) (bytes, blocks int) {
	switch {
	case o.InputRequired:
		return 0, 0
	case o.Failed && (res == nil || res.Cause() != nil || o.Scrubbed || len(res.Content) == 0):
		return len(o.Public.Message), 1 // the adapter answers with the public message
	}
	for _, c := range res.Content {
		bytes += contentBytes(c)
	}
	if !o.Failed { // a failure carries no structured content
		bytes += structuredBytes(res.StructuredContent)
	}
	return bytes, len(res.Content)
}

// contentBytes is one content block's payload as the adapter sends it.
func contentBytes(c toolctx.Content) int {
	switch c := c.(type) {
	case *toolctx.Text:
		return len(c.Text)
	case *toolctx.Image:
		return base64Len(len(c.Data))
	case *toolctx.Audio:
		return base64Len(len(c.Data))
	case *toolctx.ResourceLink:
		return len(c.URI)
	case *toolctx.EmbeddedResource:
		return len(c.Resource.Text) + base64Len(len(c.Resource.Blob))
	}
	return 0
}

// base64Len is the length of n bytes in standard padded base64.
func base64Len(n int) int { return (n + 2) / 3 * 4 }

// structuredBytes is the length of v's JSON when v is JSON already, else
// an estimate that encodes nothing (see [Record.ResponseBytes]): the
// adapter encodes the result once, and the row must not encode it again.
func structuredBytes(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case json.RawMessage:
		return len(v)
	}
	return jsonSize(v, -1)
}

// notesValue renders notes as a group of key=value attributes, in order.
func notesValue(notes []toolctx.Note) slog.Value {
	attrs := make([]slog.Attr, len(notes))
	for i, n := range notes {
		attrs[i] = slog.String(n.Key, n.Value)
	}
	return slog.GroupValue(attrs...)
}

// appendString appends key=v unless v is empty.
func appendString(attrs []slog.Attr, key, v string) []slog.Attr {
	if v == "" {
		return attrs
	}
	return append(attrs, slog.String(key, v))
}

// LogValue renders the row as a group of typed attributes (see
// [Record.Attrs]).
func (r Record) LogValue() slog.Value { return slog.GroupValue(r.Attrs()...) }

// Level is the slog level a row is logged at: Info for success, Warn for
// public failures, Error for internal failures and panics.
func (r *Record) Level() slog.Level {
	switch {
	case r.Outcome == OutcomeOK, r.Outcome == OutcomeInputRequired:
		return slog.LevelInfo
	case r.Outcome == OutcomePanic || r.Code == errs.CodeInternal || r.Status >= 500:
		return slog.LevelError
	}
	return slog.LevelWarn
}

// httpCode maps an HTTP status to the code and outcome of an HTTP row.
func httpCode(status int) (errs.Code, RowOutcome) {
	switch {
	case status < 400:
		return "", OutcomeOK
	case status == http.StatusUnauthorized:
		return errs.CodeUnauthenticated, OutcomeRejected
	case status == http.StatusForbidden:
		return errs.CodePermissionDenied, OutcomeRejected
	case status == http.StatusTooManyRequests:
		return errs.CodeRateLimited, OutcomeRejected
	case status == http.StatusNotFound:
		return errs.CodeNotFound, OutcomeRejected
	case status == http.StatusBadRequest, status == http.StatusMethodNotAllowed,
		status == http.StatusRequestEntityTooLarge, status == http.StatusUnsupportedMediaType,
		status == http.StatusNotAcceptable:
		return errs.CodeInvalidRequest, OutcomeRejected
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return errs.CodeTimeout, OutcomeTimeout
	case status == 499:
		return errs.CodeCanceled, OutcomeCanceled
	case status == http.StatusServiceUnavailable:
		return errs.CodeUnavailable, OutcomeError
	case status >= 500:
		return errs.CodeInternal, OutcomeError
	}
	return errs.CodeFailedPrecondition, OutcomeError
}
