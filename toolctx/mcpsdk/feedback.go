package mcpsdk

import (
	"encoding/json"
	"errors"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/feedback"
)

// decodeError is arguments that do not decode as a JSON object: not an
// object, malformed, or holding a number out of range.
type decodeError struct {
	raw json.RawMessage
	err error
}

func (e decodeError) Error() string { return e.err.Error() }
func (e decodeError) Unwrap() error { return e.err }

// invalidArguments is the public error of arguments that fail to decode or
// to validate: sentences about each argument at fault, and the problems as
// data (internal/feedback), never the validator's text; err is the cause.
func invalidArguments(err error) *errs.Error {
	var (
		de       decodeError
		problems []feedback.Problem
	)
	if errors.As(err, &de) {
		var ok bool
		if problems, ok = feedback.JSONProblems(de.err, de.raw); !ok {
			problems = []feedback.Problem{{Rule: "json", Expected: "a JSON object"}}
		}
	} else {
		problems = feedback.GoSDKProblems(err.Error())
	}
	return errs.InvalidArguments(feedback.Message(problems)).WithDetail(feedback.Detail(problems)).WithCause(err)
}
