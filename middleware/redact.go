package middleware

import "encoding/json"

// ArgumentsRedactor returns what may be recorded of a call's arguments: a
// redacted copy of args (JSON), or nil to record none. It must not change
// args, and may return a new slice or a part of args. It is the one
// redactor type of toolmw: audit.WithArguments takes it for the audit row,
// otelmw.WithArguments for the span, so one function serves both.
//
// A redactor that panics records nothing: the row or the span is written
// without arguments, and the panic is reported once to the fallback logger
// of the interceptor that called it.
type ArgumentsRedactor func(tool string, args json.RawMessage) json.RawMessage
