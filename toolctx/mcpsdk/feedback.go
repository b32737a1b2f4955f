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

// sentence phrases the decoding problem; encoding/json does not name the
// field of a number out of range when it decodes into a map, so that is
// looked up in the arguments.
func (e decodeError) sentence() string {
	s, ok := feedback.JSON(e.err)
	if !ok {
		return feedback.Sentence("", "expected a JSON object")
	}
	var te *json.UnmarshalTypeError
	if errors.As(e.err, &te) && te.Field == "" {
		if path, found := feedback.OutOfRangeAt(e.raw); found {
			return feedback.Sentence(path, feedback.OutOfRange)
		}
	}
	return s
}

// invalidArguments is the public error of arguments that fail to decode or
// to validate against the input schema: its message is a sentence about
// the argument (see internal/feedback); the validator's own text, where it
// differs, is in the detail under "validator", which the audit row keeps.
func invalidArguments(err error) *errs.Error {
	var de decodeError
	var s string
	if errors.As(err, &de) {
		s = de.sentence()
	} else {
		s = feedback.GoSDK(err.Error())
	}
	e := errs.InvalidArguments("invalid arguments: " + s).WithCause(err)
	if raw := err.Error(); raw != s {
		e = e.WithDetail(map[string]any{"validator": raw})
	}
	return e
}
