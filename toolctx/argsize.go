package toolctx

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// maxLenDepth is how deep jsonLen counts; a deeper value (or a cyclic one)
// is left to encoding/json.
const maxLenDepth = 64

// jsonLen returns the length of json.Marshal(v) without encoding it, and
// true, when v is made of the types decoding JSON into an any gives, and
// ints; false for anything else (a struct, a json.Marshaler, a number
// encoding/json refuses), which the caller encodes instead.
func jsonLen(v any, depth int) (int, bool) {
	if depth > maxLenDepth {
		return 0, false
	}
	switch v := v.(type) {
	case nil:
		return len("null"), true
	case bool:
		if v {
			return len("true"), true
		}
		return len("false"), true
	case string:
		return stringLen(v), true
	case float64:
		return floatLen(v)
	case int:
		return intLen(int64(v)), true
	case int64:
		return intLen(v), true
	case map[string]any:
		if v == nil {
			return len("null"), true
		}
		n := len("{}")
		for k, e := range v {
			m, ok := jsonLen(e, depth+1)
			if !ok {
				return 0, false
			}
			n += stringLen(k) + len(":") + m
		}
		if len(v) > 1 {
			n += len(v) - 1 // the commas
		}
		return n, true
	case []any:
		if v == nil {
			return len("null"), true
		}
		n := len("[]")
		for _, e := range v {
			m, ok := jsonLen(e, depth+1)
			if !ok {
				return 0, false
			}
			n += m
		}
		if len(v) > 1 {
			n += len(v) - 1
		}
		return n, true
	}
	return 0, false
}

// intLen is the length of i in decimal.
func intLen(i int64) int {
	var buf [24]byte
	return len(strconv.AppendInt(buf[:0], i, 10))
}

// floatLen is the length of f as encoding/json writes a float64: the
// shortest decimal, in exponent form outside [1e-6, 1e21) with the
// exponent's leading zero dropped; NaN and the infinities do not encode.
func floatLen(f float64) (int, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	if format == 'e' {
		// e-07 is written e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			return n - 1, true
		}
	}
	return len(b), true
}

// stringLen is the length of s as encoding/json writes a string, with its
// HTML escaping (json.Marshal's): quoted; '"' and '\\' and the control
// characters with a short escape as two bytes; other control characters,
// '<', '>', '&', U+2028, U+2029 and each invalid byte (written as U+FFFD)
// as six.
func stringLen(s string) int {
	n := len(`""`)
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				n += len(`\u0000`)
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += len(`\u0000`)
		default:
			n += size
		}
		i += size
	}
	return n
}
