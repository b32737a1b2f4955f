package adapter

import (
	"context"
	"errors"

	"github.com/toolmw/toolmw/toolctx"
)

// ResultChecker is what an adapter puts in the context of each call it runs
// ([WithResultChecker]) so that the chain learns, before it records how the
// call ended, whether the adapter can send a result: a result an
// interceptor built may not encode (a chan in its structured content, a
// MarshalJSON that fails, a public detail that is not JSON), and the
// adapter then answers with the generic internal failure. Without the
// check the chain's hooks (audit, diagnostics, traces) would record a
// success the client never received.
type ResultChecker interface {
	// CheckResult returns why the adapter could not send r (normalized
	// by the adapter's rules) to the client, or nil. It must be safe for
	// concurrent use and must not change r. An adapter remembers what it
	// checked, so that it does not encode the same result twice.
	CheckResult(r *toolctx.CallResult) error
}

type resultCheckerKey struct{}

// resultCheckContext is a context that carries a [ResultChecker].
type resultCheckContext struct {
	context.Context
	checker ResultChecker
}

// Value returns the checker for Sendable's key and defers to the embedded
// context otherwise.
func (c *resultCheckContext) Value(key any) any {
	if _, ok := key.(resultCheckerKey); ok {
		return c.checker
	}
	return c.Context.Value(key)
}

// WithResultChecker returns a copy of ctx that carries rc, for [Sendable].
// [Call.Serve] carries its call as the checker without it (in the call's
// own context); an adapter that does not serve through Call calls it once
// per call. A nil rc returns ctx.
func WithResultChecker(ctx context.Context, rc ResultChecker) context.Context {
	if rc == nil {
		return ctx
	}
	return &resultCheckContext{Context: ctx, checker: rc}
}

// ErrUnsendable marks the cause of a result that [Sendable] replaced: the
// adapter could not send the result the chain produced. errors.Is finds it
// in the cause, which also wraps the adapter's reason.
var ErrUnsendable = errors.New("toolmw: the adapter cannot send the chain's result")

// Sendable returns r when the adapter running the call (the [ResultChecker]
// in ctx) can send it, or when ctx has no checker; otherwise a raw failure
// whose cause wraps [ErrUnsendable] and the adapter's reason, which the
// adapter answers with the generic internal failure. r's notes are kept.
// middleware.After and middleware.Diagnostics call it on every result
// before they classify it, so that the audit row and diagnostics tell what
// the client was sent; an interceptor that records outcomes of its own
// should too. A nil r is returned as it is (it is a failure already).
func Sendable(ctx context.Context, r *toolctx.CallResult) *toolctx.CallResult {
	if r == nil {
		return nil
	}
	rc, _ := ctx.Value(resultCheckerKey{}).(ResultChecker)
	if rc == nil {
		return r
	}
	err := rc.CheckResult(r)
	if err == nil {
		return r
	}
	out := toolctx.ErrorResult(unsendableError{err})
	for _, n := range r.Notes() {
		out = out.WithNote(n.Key, n.Value)
	}
	return out
}

// unsendableError is the cause of a result Sendable replaced.
type unsendableError struct{ err error }

func (e unsendableError) Error() string   { return ErrUnsendable.Error() + ": " + e.err.Error() }
func (e unsendableError) Unwrap() []error { return []error{ErrUnsendable, e.err} }
