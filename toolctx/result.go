package toolctx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/ctxend"
	"github.com/toolmw/toolmw/internal/jsonclone"
)

// CallResult is the outcome of a tool call.
//
// Its exported fields are public: an adapter sends them to the client. The
// raw error of a failed call is kept in an unexported field, read on the
// server side with [CallResult.Cause]; encoders never see it, and printing
// a CallResult with fmt (any verb) or logging it with slog shows only the
// public fields.
//
// Build one with [TextResult], [StructuredResult] or [ErrorResult]. Treat a
// result as immutable once returned: interceptors that change one return a
// new value ([Normalized] does), because a handler may return a shared one.
type CallResult struct {
	// Content is the unstructured content.
	Content []Content
	// StructuredContent is the structured result; it must encode to JSON.
	StructuredContent any
	// Meta is the result's _meta.
	Meta map[string]any
	// IsError reports a failed call (see [CallResult.Failed], which also
	// counts a result with only Error set).
	IsError bool
	// Error is the public envelope of a failed call. [Normalized] sets it
	// (and IsError with it); it is nil on success and on failures not yet
	// normalized.
	Error *errs.Public
	// InputRequired, when set on a result that is not a failure, makes it
	// the input-required answer of a multi-round-trip request (see
	// [InputRequired], [InputRequiredResult]): adapters send its requests
	// and state, and no content. A failure never carries it (normalizing
	// one drops it).
	InputRequired *InputRequired

	cause    error
	scrubbed bool
	notes    []Note // server-side annotations for the audit row (notes.go)
}

// ErrNilResult is the cause recorded when a handler returns a nil
// *CallResult.
var ErrNilResult = errors.New("toolctx: the handler returned a nil *CallResult")

// ErrorMetaKey is the _meta key under which adapters send a failure's
// public code and detail, as {"code": ..., "detail": ...}, for clients that
// read them. It has a reverse-DNS prefix the project owns, as the MCP spec
// asks of vendor _meta keys.
const ErrorMetaKey = "io.github.toolmw/error"

// TextResult returns a successful result with one text content.
func TextResult(text string) *CallResult {
	return &CallResult{Content: []Content{&Text{Text: text}}}
}

// StructuredResult returns a successful result whose structured content is
// v encoded as JSON, with the same JSON as its text content. If v cannot be
// encoded the result is a failure whose cause is the encoding error.
func StructuredResult(v any) *CallResult {
	b, err := json.Marshal(v)
	if err != nil {
		return ErrorResult(fmt.Errorf("encode structured result: %w", err))
	}
	return &CallResult{
		Content:           []Content{&Text{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// ErrorResult returns a failed result that keeps err as its raw cause. The
// public envelope is filled when the result is normalized: an [*errs.Error]
// keeps its public fields, anything else gets a generic message. A nil err
// is recorded as an internal failure.
func ErrorResult(err error) *CallResult {
	if err == nil {
		err = errors.New("toolctx: ErrorResult called with a nil error")
	}
	return &CallResult{IsError: true, cause: err}
}

// Failed reports whether r is a failure: IsError is set, or a public
// envelope (Error) is, or r is nil (a handler that returned nil failed). It
// is the one way to ask: a hand-built CallResult{Error: &pub} without
// IsError is a failure too, and [Normalized] sets IsError on it.
func (r *CallResult) Failed() bool { return r == nil || r.IsError || r.Error != nil }

// Cause returns the raw error of a failed call, or nil. It is for server-side
// code (diagnostics, audit); never send its text to the client.
func (r *CallResult) Cause() error {
	if r == nil {
		return ErrNilResult
	}
	return r.cause
}

// Scrubbed reports whether the result is a normalized failure whose raw
// message was replaced by a public one (see [Outcome.Scrubbed]).
func (r *CallResult) Scrubbed() bool { return r != nil && r.scrubbed }

// Outcome is how a call ended, as the caller sees it.
type Outcome struct {
	// Failed reports an isError result.
	Failed bool
	// Public is the envelope the caller sees when Failed.
	Public errs.Public
	// InputRequired reports an input-required result ([CallResult.NeedsInput]):
	// not a failure, and not yet a success either.
	InputRequired bool
	// Scrubbed reports that the caller's message is not the cause's: a raw
	// message replaced by a public one because it may not be shown (the
	// generic message, or the canceled or timeout message of a raw failure
	// after the call's context ended), or a handler's public failure that
	// middleware.Timeout replaced with its timeout after the deadline. Then,
	// and only then, the audit row records the cause's server-side text
	// ([errs.Describe]).
	Scrubbed bool
}

// Classify returns the outcome of r as the caller will see it, under n,
// whether or not r was normalized yet. ctx is the call's context, and
// whether it has ended is read from the clock where it has a deadline (a
// late timer sets ctx.Err() late): a raw failure after the context ended
// (the handler's "connection reset", say) is shown as canceled or timeout,
// still Scrubbed, so that the audit row keeps its raw message; a panic
// stays an internal failure. A context error while the call is live (the
// handler's own inner timeout) is a raw failure (see
// [errs.Normalizer.NormalizeCall]).
func Classify(ctx context.Context, r *CallResult, n errs.Normalizer) Outcome {
	o, _ := classify(ctx, r, n)
	return o
}

// classify is Classify, and also returns the cause to record for a raw
// failure ([errs.Normalizer.NormalizeCause]): r's, or the
// [*errs.GaveUpError] of a cause whose methods did not return; nil when r
// is not a raw failure.
func classify(ctx context.Context, r *CallResult, n errs.Normalizer) (Outcome, error) {
	switch {
	case r == nil:
		pub, _ := n.Normalize(ErrNilResult)
		return Outcome{Failed: true, Public: pub, Scrubbed: true}, nil
	case !r.Failed():
		return Outcome{InputRequired: r.InputRequired != nil}, nil
	case r.Error != nil:
		pub, _ := validPublic(*r.Error)
		return Outcome{Failed: true, Public: pub, Scrubbed: r.scrubbed}, nil
	case r.cause == nil:
		return Outcome{Failed: true, Public: errs.Public{Code: errs.CodeToolError, Message: r.text()}}, nil
	}
	pub, scrubbed, cause := n.NormalizeCause(ctx, r.cause)
	if scrubbed {
		if end := ctxend.Err(ctx); end != nil {
			if errs.PanicOf(cause) == nil {
				pub, _ = n.Normalize(end)
			}
		}
	}
	return Outcome{Failed: true, Public: pub, Scrubbed: scrubbed}, cause
}

// Normalized returns r with its public envelope filled, as the caller must
// see it: successes and already-normalized results are returned unchanged;
// a failure becomes a new result with IsError and Error set, the public
// message as its only content, no structured content and no _meta, and the
// raw cause kept (or, when normalizing it gave up because a method of its
// chain did not return, an [*errs.GaveUpError] that says so and holds it;
// see [errs.Normalizer.NormalizeCause]). A handler's own isError result keeps its content, its
// blocks without their _meta. A failure whose envelope was set by hand
// keeps its envelope (repaired) and content, without structured content or
// _meta at any level. A nil r becomes an internal failure.
// Adapters add the code and public detail
// under [ErrorMetaKey] in the result's _meta.
func Normalized(ctx context.Context, r *CallResult, n errs.Normalizer) *CallResult {
	if !r.Failed() {
		return r
	}
	if r != nil && r.Error != nil {
		// An envelope set by hand may break the contract (a code outside
		// the closed set, no message, no IsError, structured content or
		// _meta, which a failure never carries): repair a copy.
		pub, changed := validPublic(*r.Error)
		content := withoutMeta(r.Content)
		if changed || !r.IsError || r.StructuredContent != nil || r.Meta != nil || !sameContent(content, r.Content) {
			c := *r
			c.Error = &pub
			c.IsError = true
			c.StructuredContent, c.Meta, c.Content = nil, nil, content
			return &c
		}
		return r
	}
	o, cause := classify(ctx, r, n)
	out := failure(o.Public, o.Scrubbed)
	out.notes = r.Notes() // an interceptor's notes survive normalization
	switch {
	case r == nil:
		out.cause = ErrNilResult
	case r.cause == nil:
		if len(r.Content) > 0 {
			out.Content = withoutMeta(r.Content)
		}
	default:
		out.cause = cause // r's, or why normalizing it gave up
	}
	return out
}

// withoutMeta returns content without the _meta of its blocks (and of an
// embedded resource): a failure carries no _meta, as it carries no
// structured content, so a handler's own isError result keeps its content
// but not what it filed under _meta (a cause, say). content itself is not
// changed; it is returned as it is when no block has _meta.
func withoutMeta(content []Content) []Content {
	has := false
	for _, c := range content {
		switch c := c.(type) {
		case *Text:
			has = has || (c != nil && c.Meta != nil)
		case *Image:
			has = has || (c != nil && c.Meta != nil)
		case *Audio:
			has = has || (c != nil && c.Meta != nil)
		case *ResourceLink:
			has = has || (c != nil && c.Meta != nil)
		case *EmbeddedResource:
			has = has || (c != nil && (c.Meta != nil || c.Resource.Meta != nil))
		}
	}
	if !has {
		return content
	}
	out := make([]Content, len(content))
	for i, c := range content {
		switch c := c.(type) {
		case *Text:
			if c != nil {
				cc := *c
				cc.Meta = nil
				out[i] = &cc
				continue
			}
		case *Image:
			if c != nil {
				cc := *c
				cc.Meta = nil
				out[i] = &cc
				continue
			}
		case *Audio:
			if c != nil {
				cc := *c
				cc.Meta = nil
				out[i] = &cc
				continue
			}
		case *ResourceLink:
			if c != nil {
				cc := *c
				cc.Meta = nil
				out[i] = &cc
				continue
			}
		case *EmbeddedResource:
			if c != nil {
				cc := *c
				cc.Meta, cc.Resource.Meta = nil, nil
				out[i] = &cc
				continue
			}
		}
		out[i] = c
	}
	return out
}

// sameContent reports whether a and b are the same slice.
func sameContent(a, b []Content) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// ScrubbedResult returns a normalized failure that tells the caller pub in
// place of cause, whose raw message may not be shown. It is Scrubbed, so the
// audit row records cause's message, as for any raw failure the caller
// never saw. It is for interceptors that put a public failure of their own
// in place of a raw one (middleware.Timeout does, for a raw error returned
// after its deadline). pub is repaired as [Normalized] repairs an envelope
// set by hand; a nil cause is recorded as an internal failure.
func ScrubbedResult(pub errs.Public, cause error) *CallResult {
	if cause == nil {
		cause = errors.New("toolctx: ScrubbedResult called with a nil cause")
	}
	pub, _ = validPublic(pub)
	out := failure(pub, true)
	out.cause = cause
	return out
}

// failure returns a failed result whose envelope is pub and whose only
// content is pub's message: one allocation for the result, its envelope and
// its text.
func failure(pub errs.Public, scrubbed bool) *CallResult {
	box := &struct {
		res     CallResult
		pub     errs.Public
		text    Text
		content [1]Content
	}{pub: pub}
	box.text.Text = box.pub.Message
	box.content[0] = &box.text
	box.res = CallResult{Content: box.content[:], IsError: true, Error: &box.pub, scrubbed: scrubbed}
	return &box.res
}

// validPublic returns p with a code from the closed set ([errs.CodeInternal]
// for any other), a non-empty message (the code's default) and detail
// without error values (errs.PublicDetail), and whether it had to change
// anything.
func validPublic(p errs.Public) (errs.Public, bool) {
	changed := false
	if !p.Code.Valid() {
		p.Code, changed = errs.CodeInternal, true
	}
	if p.Message == "" {
		p.Message, changed = p.Code.DefaultMessage(), true
	}
	if d, withheld := jsonclone.Public(p.Detail, publicOf); withheld {
		// An envelope set by hand with an error value in its detail: the
		// error's JSON would show its fields (see errs.PublicDetail).
		p.Detail, changed = d, true
	}
	return p, changed
}

// publicOf is what public detail shows of an error value.
func publicOf(err error) any {
	if e, ok := err.(*errs.Error); ok && e != nil {
		return e.Public().Message
	}
	return errs.WithheldDetail
}

func (r *CallResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*Text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	if b.Len() == 0 {
		return errs.CodeToolError.DefaultMessage()
	}
	return b.String()
}

// publicView is what fmt and slog show of a CallResult.
type publicView struct {
	IsError           bool
	Error             *errs.Public
	Content           []Content
	StructuredContent any
	Meta              map[string]any
	InputRequired     *InputRequired
}

func (r CallResult) view() publicView {
	return publicView{IsError: r.IsError, Error: r.Error, Content: r.Content, StructuredContent: r.StructuredContent, Meta: r.Meta, InputRequired: r.InputRequired}
}

// Format prints the public fields only, for every verb, so that a raw cause
// never reaches a log line through fmt.
func (r CallResult) Format(f fmt.State, verb rune) {
	v := r.view()
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprintf(f, "toolctx.CallResult%+v", v)
	case verb == 'v' && f.Flag('+'):
		fmt.Fprintf(f, "%+v", v)
	default:
		fmt.Fprintf(f, "%v", v)
	}
}

// LogValue renders the public fields for slog; the cause is not included.
func (r CallResult) LogValue() slog.Value {
	attrs := []slog.Attr{slog.Bool("is_error", r.IsError)}
	if r.Error != nil {
		attrs = append(attrs, slog.String("code", string(r.Error.Code)), slog.String("message", r.Error.Message))
	}
	attrs = append(attrs, slog.Int("content", len(r.Content)))
	if r.InputRequired != nil {
		attrs = append(attrs, slog.Int("input_requests", len(r.InputRequired.Requests)))
	}
	return slog.GroupValue(attrs...)
}
