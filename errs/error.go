package errs

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/toolmw/toolmw/internal/jsonclone"
)

// Error is an explicit public error: a handler returns one when the client
// should be told what went wrong.
//
// Its code, message and detail cross to the client. The cause, set with
// [Error.WithCause] and reached with [errors.Unwrap], stays on the server: it
// is for diagnostics and logs, never for the caller. So that no code can
// leak it by copying an error's text, [Error.Error] is the public message
// only; the server-side renderings that show the cause are %+v
// ([Error.Format]) and slog ([Error.LogValue]).
//
// Construct one with [New] or a code's constructor ([NotFound],
// [InvalidArguments], ...). An *Error is immutable: its fields are read
// through methods, the With methods return copies, and its detail is
// copied in and out, so a package-level sentinel cannot be changed by any
// importer.
type Error struct {
	code    Code
	message string
	detail  map[string]any
	cause   error
}

// Code returns the code as constructed; an invalid code is reported to the
// client as [CodeInternal] (see [Error.Public]).
func (e *Error) Code() Code {
	if e == nil {
		return CodeInternal
	}
	return e.code
}

// Message returns the public message as constructed; empty means the
// code's default message (see [Error.Public]).
func (e *Error) Message() string {
	if e == nil {
		return ""
	}
	return e.message
}

// Detail returns a deep copy of the public structured detail, or nil.
func (e *Error) Detail() map[string]any {
	if e == nil {
		return nil
	}
	return jsonclone.Map(e.detail)
}

// New returns an *Error with the given code and public message.
func New(code Code, message string) *Error {
	return &Error{code: code, message: message}
}

// Errorf returns an *Error whose public message is formatted with
// fmt.Sprintf. Its verbs do not wrap: use [Error.WithCause] for a cause.
// An argument that is a raw error (any error but an [*Error], whose text is
// its public message) is not formatted into the public message, which
// crosses to the client: its place says [WithheldError], and the error
// becomes the private cause (several are joined), so that
// errs.Errorf(code, "load %s: %v", id, err) keeps the rule.
func Errorf(code Code, format string, args ...any) *Error {
	var raw []error
	for i, a := range args {
		err, ok := a.(error)
		if !ok {
			continue
		}
		if _, public := err.(*Error); public {
			continue
		}
		if raw == nil {
			args = append([]any(nil), args...) // the caller's slice is not changed
		}
		raw = append(raw, err)
		args[i] = withheldArg{}
	}
	e := &Error{code: code, message: fmt.Sprintf(noWrapVerbs(format), args...)}
	switch len(raw) {
	case 0:
	case 1:
		e.cause = raw[0]
	default:
		e.cause = errors.Join(raw...)
	}
	return e
}

// noWrapVerbs returns format with each %w verb as %v: Sprintf has no %w,
// and its bad-verb text would print the argument's value.
func noWrapVerbs(format string) string {
	if !strings.Contains(format, "%") {
		return format
	}
	b := []byte(format)
	for i := 0; i < len(b); i++ {
		if b[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(b) && strings.IndexByte("+-# 0123456789.*[]", b[j]) >= 0 {
			j++ // flags, width, precision, argument indexes
		}
		if j < len(b) && b[j] == 'w' {
			b[j] = 'v'
		}
		i = j
	}
	return string(b)
}

// WithheldError is what [Errorf] formats in place of a raw error argument.
const WithheldError = "[error withheld]"

// withheldArg formats as WithheldError for every verb.
type withheldArg struct{}

func (withheldArg) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, WithheldError) }

// InvalidArguments returns an *Error with [CodeInvalidArguments].
func InvalidArguments(message string) *Error { return New(CodeInvalidArguments, message) }

// NotFound returns an *Error with [CodeNotFound].
func NotFound(message string) *Error { return New(CodeNotFound, message) }

// AlreadyExists returns an *Error with [CodeAlreadyExists].
func AlreadyExists(message string) *Error { return New(CodeAlreadyExists, message) }

// FailedPrecondition returns an *Error with [CodeFailedPrecondition].
func FailedPrecondition(message string) *Error { return New(CodeFailedPrecondition, message) }

// PermissionDenied returns an *Error with [CodePermissionDenied].
func PermissionDenied(message string) *Error { return New(CodePermissionDenied, message) }

// Unauthenticated returns an *Error with [CodeUnauthenticated].
func Unauthenticated(message string) *Error { return New(CodeUnauthenticated, message) }

// RateLimited returns an *Error with [CodeRateLimited].
func RateLimited(message string) *Error { return New(CodeRateLimited, message) }

// QuotaExceeded returns an *Error with [CodeQuotaExceeded].
func QuotaExceeded(message string) *Error { return New(CodeQuotaExceeded, message) }

// Timeout returns an *Error with [CodeTimeout].
func Timeout(message string) *Error { return New(CodeTimeout, message) }

// Canceled returns an *Error with [CodeCanceled].
func Canceled(message string) *Error { return New(CodeCanceled, message) }

// Unavailable returns an *Error with [CodeUnavailable].
func Unavailable(message string) *Error { return New(CodeUnavailable, message) }

// UnknownTool returns an *Error with [CodeUnknownTool] naming the tool.
func UnknownTool(name string) *Error {
	return &Error{code: CodeUnknownTool, message: fmt.Sprintf("unknown tool %q", name)}
}

// Internal returns an *Error with [CodeInternal] and a public message of the
// caller's choosing. To hide a cause, return the raw error instead: it gets
// [GenericMessage].
func Internal(message string) *Error { return New(CodeInternal, message) }

// WithCause returns a copy of e with a private cause. The cause is reachable
// through [errors.Unwrap], [errors.Is] and [errors.As], and shown by the
// server-side renderings (%+v, slog), never by Error; it never crosses to
// the client.
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// WithDetail returns a copy of e with public structured detail: a deep
// copy of detail (JSON-shaped: maps, slices and scalars), so that changing
// detail afterwards changes nothing. An error value in detail, or a value
// that holds one (a struct field, a pointer, a list element), is replaced
// by [WithheldDetail], or by the public message of an [*Error]: an error's
// JSON shows its fields (an *fs.PathError's path, a *url.Error's URL) or
// whatever its MarshalJSON writes, and the detail crosses to the client.
func (e *Error) WithDetail(detail map[string]any) *Error {
	c := *e
	c.detail = PublicDetail(detail)
	return &c
}

// WithheldDetail is what [Error.WithDetail] and [PublicDetail] put in place
// of a raw error value in public detail.
const WithheldDetail = "[withheld: an error is not public detail]"

// PublicDetail returns a deep copy of detail fit to cross to the client, as
// [Error.WithDetail] makes it: each error value, or value that holds one,
// replaced by [WithheldDetail] (an [*Error] by its public message). Code
// that builds a [Public] by hand uses it; toolctx applies it to a result's
// envelope.
func PublicDetail(detail map[string]any) map[string]any {
	out, changed := jsonclone.Public(detail, withheld)
	if !changed {
		return jsonclone.Map(out)
	}
	return out
}

// withheld is what public detail shows of err.
func withheld(err error) any {
	if e, ok := err.(*Error); ok && e != nil {
		return e.Public().Message
	}
	return WithheldDetail
}

// Error returns the public message (the code's default message when
// Message is empty): the text the client is shown, so that code which
// copies an error's text into a result, or wraps it with %w, can never
// leak the private cause. The cause is reached with [errors.Unwrap] and
// shown by %+v and slog, on the server side.
func (e *Error) Error() string {
	if e == nil {
		return "<nil *errs.Error>"
	}
	return e.Public().Message
}

// Format implements fmt.Formatter. %v and %s print [Error.Error], the
// public message; %q prints it quoted. %+v is the server-side rendering:
// the code, the public message and the private cause (itself printed with
// %+v, through [Describe]), as "not_found: no such invoice: <cause>". Only
// an *Error printed directly shows its cause: one wrapped with %w is part
// of the wrapper's Error text, which is public.
func (e *Error) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('+'):
		_, _ = io.WriteString(f, e.detailed())
	case verb == 'q':
		_, _ = fmt.Fprintf(f, "%q", e.Error())
	default:
		_, _ = io.WriteString(f, e.Error())
	}
}

// detailed is the %+v rendering.
func (e *Error) detailed() string {
	if e == nil {
		return e.Error()
	}
	pub := e.Public()
	s := string(pub.Code) + ": " + pub.Message
	if e.cause != nil {
		s += ": " + Describe(e.cause)
	}
	return s
}

// LogValue renders e for slog, on the server side: its code, public
// message and, when it has one, its private cause (see [Describe]).
func (e *Error) LogValue() slog.Value {
	if e == nil {
		return slog.StringValue(e.Error())
	}
	pub := e.Public()
	attrs := []slog.Attr{slog.String("code", string(pub.Code)), slog.String("message", pub.Message)}
	if e.cause != nil {
		attrs = append(attrs, slog.String("cause", Describe(e.cause)))
	}
	return slog.GroupValue(attrs...)
}

// Unwrap returns the private cause, or nil.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is an *Error with the same code and either the
// same message or no message, so errors.Is(err, errs.NotFound("")) matches
// any not-found error through any wrapping.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t == nil {
		return false
	}
	return t.code == e.code && (t.message == "" || t.message == e.message)
}

// Public returns what the client may see of e, its detail a deep copy. A nil *Error gives the
// internal code and [GenericMessage].
func (e *Error) Public() Public {
	if e == nil {
		return Public{Code: CodeInternal, Message: GenericMessage}
	}
	code := e.code
	if !code.Valid() {
		code = CodeInternal
	}
	msg := e.message
	if msg == "" {
		msg = code.DefaultMessage()
	}
	return Public{Code: code, Message: msg, Detail: jsonclone.Map(e.detail)}
}

// Public is the envelope of a failed call that crosses to the client: a
// code, a message and optional structured detail. It never holds a raw
// error's text.
type Public struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Detail  map[string]any `json:"detail,omitempty"`
}
