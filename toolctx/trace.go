package toolctx

import (
	"context"
	"encoding/hex"
)

// TraceRef names the trace span a tool call runs in: a W3C trace id and span
// id. A tracing interceptor (middleware/otelmw) puts it in the call's
// context when its span is recording; the audit interceptor copies it into
// the row, so that the row and the span of a call can be joined. It lets
// those packages meet without importing a tracing library here. The zero
// TraceRef names no span.
type TraceRef struct {
	TraceID [16]byte
	SpanID  [8]byte
}

// IsZero reports whether r names no span.
func (r TraceRef) IsZero() bool { return r == TraceRef{} }

// HexIDs returns the trace id and the span id as 32 and 16 lowercase hex
// digits (one allocation for both), or two empty strings for the zero
// TraceRef.
func (r TraceRef) HexIDs() (traceID, spanID string) {
	if r.IsZero() {
		return "", ""
	}
	var buf [2 * (16 + 8)]byte
	hex.Encode(buf[:32], r.TraceID[:])
	hex.Encode(buf[32:], r.SpanID[:])
	s := string(buf[:])
	return s[:32], s[32:]
}

type traceRefKey struct{}

// traceRefCtx carries a TraceRef in one allocation (context.WithValue would
// take two: the context and the boxed value).
type traceRefCtx struct {
	context.Context
	ref TraceRef
}

func (c *traceRefCtx) Value(key any) any {
	if _, ok := key.(traceRefKey); ok {
		return &c.ref
	}
	return c.Context.Value(key)
}

// WithTraceRef returns a copy of ctx that carries ref.
func WithTraceRef(ctx context.Context, ref TraceRef) context.Context {
	return &traceRefCtx{Context: ctx, ref: ref}
}

// TraceRefFrom returns the TraceRef set by [WithTraceRef], or the zero
// TraceRef.
func TraceRefFrom(ctx context.Context) TraceRef {
	if r, ok := ctx.Value(traceRefKey{}).(*TraceRef); ok {
		return *r
	}
	return TraceRef{}
}
