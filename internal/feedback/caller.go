package feedback

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// FromCaller reports whether the *json.UnmarshalTypeError in err says only
// what the caller sent in raw: its value is one of encoding/json's own
// descriptions of a JSON value ("string", "number 1.5", ...) and every
// element of its field path is a key the caller sent. encoding/json returns
// an UnmarshalJSON method's error as it is, so an *UnmarshalTypeError may
// be a user type's, holding any text (a raw cause); its words reach the
// client only when they are the caller's own. An err without one reports
// false.
func FromCaller(err error, raw []byte) bool {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te == nil {
		return false
	}
	switch v := te.Value; {
	case v == "string", v == "bool", v == "array", v == "object", v == "null", v == "number":
	case strings.HasPrefix(v, "number "):
		if lit := strings.TrimPrefix(v, "number "); lit == "" || !bytes.Contains(raw, []byte(lit)) {
			return false
		}
	default:
		return false
	}
	if te.Field == "" {
		return true
	}
	for _, name := range strings.Split(te.Field, ".") {
		if !SentKey(raw, name) {
			return false
		}
	}
	return true
}

// SentKey reports whether the JSON raw holds name as a string, as an
// object key the caller sent would be (looked for as its quoted form, so a
// key sent with escapes counts as not sent: the safe side).
func SentKey(raw []byte, name string) bool {
	return name != "" && bytes.Contains(raw, []byte(strconv.Quote(name)))
}
