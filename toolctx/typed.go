package toolctx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/feedback"
)

// TypedFunc is a tool written with Go types: it receives the decoded
// arguments and returns a value that becomes the structured result.
type TypedFunc[In, Out any] func(ctx context.Context, req *Request, in In) (Out, error)

// Typed returns a Handler that decodes the call's arguments into In, calls
// fn, and encodes Out as structured content plus the same JSON as text.
//
// Arguments that do not decode (bad JSON, a wrong type, an unknown field)
// give an [errs.CodeInvalidArguments] result whose public message names the
// field, without calling fn. An error from fn becomes [ErrorResult](err):
// an [*errs.Error] keeps its public fields, anything else is scrubbed. An
// Out that cannot be encoded is an internal failure. A nil fn panics, at
// construction (see package middleware's doc on construction mistakes).
func Typed[In, Out any](fn TypedFunc[In, Out]) Handler {
	if fn == nil {
		panic("toolctx.Typed: the function is nil")
	}
	return HandlerFunc(func(ctx context.Context, req *Request) *CallResult {
		var in In
		if err := DecodeArguments(req.Arguments.JSON(), &in); err != nil {
			return ErrorResult(err)
		}
		out, err := fn(ctx, req, in)
		if err != nil {
			return ErrorResult(err)
		}
		return StructuredResult(out)
	})
}

// DecodeArguments decodes raw JSON arguments into v, rejecting unknown
// fields and trailing data. Empty arguments and null decode as the zero
// value. A failure is an [*errs.Error] with [errs.CodeInvalidArguments]
// whose public message and detail name the field at fault; the decoder's
// own error is its private cause.
func DecodeArguments(raw json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	if trimmed[0] != '{' {
		return errs.InvalidArguments("invalid arguments: expected a JSON object").
			WithDetail(map[string]any{"problem": "not_an_object"})
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errTrailingData
		}
	}
	if err == nil {
		return nil
	}
	return decodeError(err, trimmed)
}

// errTrailingData is the decoding error of arguments followed by more
// JSON: DecodeArguments' own, known by identity.
var errTrailingData = errors.New("trailing data after the arguments object")

// decodeError is the public error of arguments that did not decode. Only
// what is the caller's own reaches its message: encoding/json returns the
// error of an UnmarshalJSON method of v's type as it is, whatever its type
// and text, so a type error or an unknown field is described only when
// its words are in raw (internal/feedback.FromCaller), and anything else
// gets a fixed message.
func decodeError(err error, raw []byte) *errs.Error {
	var (
		typeErr   *json.UnmarshalTypeError
		syntaxErr *json.SyntaxError
	)
	switch {
	case errors.Is(err, errTrailingData):
		return errs.InvalidArguments("invalid arguments: " + errTrailingData.Error()).WithCause(err)
	case errors.As(err, &typeErr) && !feedback.FromCaller(err, raw):
		return errs.InvalidArguments("invalid arguments: the arguments do not match the tool's input").WithCause(err)
	case errors.As(err, &typeErr):
		// A sentence about the argument: "b: expected a number, got a
		// string", "a: number out of range" (internal/feedback).
		problems, _ := feedback.JSONProblems(typeErr, raw)
		return errs.InvalidArguments(feedback.Message(problems)).
			WithDetail(feedback.Detail(problems)).WithCause(err)
	case errors.As(err, &syntaxErr):
		return errs.Errorf(errs.CodeInvalidArguments, "invalid arguments: malformed JSON at byte %d", syntaxErr.Offset).
			WithDetail(map[string]any{"offset": syntaxErr.Offset}).WithCause(err) // a number, not the decoder's text
	case strings.HasPrefix(err.Error(), "json: unknown field ") && feedback.SentKey(raw, unknownField(err)):
		field := unknownField(err)
		return errs.Errorf(errs.CodeInvalidArguments, "invalid arguments: unknown field %q", field).
			WithDetail(feedback.Detail([]feedback.Problem{{Path: field, Rule: "additionalProperties", Expected: "absent"}})).WithCause(err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.InvalidArguments("invalid arguments: truncated JSON").WithCause(err)
	}
	return errs.InvalidArguments(fmt.Sprintf("invalid arguments: %s", publicDecodeText(err))).WithCause(err)
}

// unknownField is the field named by encoding/json's unknown-field error.
func unknownField(err error) string {
	return strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
}

// publicDecodeText is the message of any other decoding error: its text may
// be an UnmarshalJSON method's, so none of it is public.
func publicDecodeText(error) string {
	return "the arguments do not match the tool's input"
}
