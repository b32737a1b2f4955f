package adapter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unsafe"
)

// quickDepth bounds the nesting the fast path reads; deeper frames take the
// slow path, which decodes as the SDK does (go-sdk refuses nesting deeper
// than 1000, encoding/json deeper than 10000).
const quickDepth = 1000

// quick reports whether message, valid JSON, is a tools/call request the
// SDK surely decodes, reading it without allocating: JSON whose envelope is
// "jsonrpc":"2.0", an "id" that is a string, a number within float64's
// range or null, "method":"tools/call", and params of the shape every
// client sends (see quickParams). Any other key, a key with an escape or a
// non-ASCII byte (with KeysFold a key may name a field under another
// spelling), a number beyond float64's range, nesting deeper than
// quickDepth: false, "not known", and the guard decodes as the SDK would.
// TestFrameQuickIsSafe (and each adapter's own test) holds it to the SDKs'
// decoders.
func (g *FrameGuard) quick(message []byte) bool {
	s := scanner{b: message, fold: g.codec.Keys == KeysFold}
	sawMethod, sawVersion := false, false
	ok := s.object(true, 1, func(key []byte) bool {
		switch {
		case s.keyIs(key, "method"):
			v, plain, ok := s.str()
			sawMethod = ok && plain && string(v) == "tools/call"
			return sawMethod
		case s.keyIs(key, "params"):
			return s.params()
		case s.keyIs(key, "jsonrpc"):
			v, plain, ok := s.str()
			sawVersion = ok && plain && string(v) == "2.0"
			return sawVersion
		case s.keyIs(key, "id"):
			switch c := s.peek(); {
			case c == '"':
				_, _, ok := s.str()
				return ok
			case c == 'n':
				return s.literal("null")
			case c == '-' || (c >= '0' && c <= '9'):
				return s.skip(1)
			}
			return false
		}
		return false
	})
	return ok && sawMethod && sawVersion && s.end()
}

// quickParams is quick for the params of a tools/call alone.
func (g *FrameGuard) quickParams(params []byte) bool {
	if len(params) == 0 || !json.Valid(params) {
		return false
	}
	s := scanner{b: params, fold: g.codec.Keys == KeysFold}
	return s.params() && s.end()
}

// params reads the params of a tools/call request as both SDKs decode them:
// name a string, arguments any value (go-sdk keeps it raw, mcp-go decodes
// it into an any: a number beyond float64's range fails), _meta an object
// (decoded into a map). Other keys: with KeysExact (go-sdk ignores a key
// that names no field) any but the fields whose shape this does not read
// (go-sdk's inputResponses and requestState) is read and passed over; with
// KeysFold, none.
func (s *scanner) params() bool {
	if s.literal("null") {
		return true
	}
	return s.object(true, 2, func(key []byte) bool {
		switch {
		case s.keyIs(key, "name"):
			if s.literal("null") {
				return true
			}
			_, _, ok := s.str()
			return ok
		case s.keyIs(key, "arguments"):
			return s.skip(3)
		case s.keyIs(key, "_meta"):
			return s.literal("null") || (s.peek() == '{' && s.skip(3))
		case s.fold, s.keyIs(key, "inputResponses"), s.keyIs(key, "requestState"), s.keyIs(key, "task"):
			return false
		}
		return s.skip(3)
	})
}

// maxPlainDigits is the longest number without an exponent that is surely
// within float64's range (its largest, about 1.8e308, has 309 digits).
const maxPlainDigits = 308

// scanner walks JSON that json.Valid accepted.
type scanner struct {
	b    []byte
	i    int
	fold bool
}

func (s *scanner) keyIs(key []byte, name string) bool {
	if s.fold {
		return foldEq(key, name)
	}
	return string(key) == name
}

func (s *scanner) peek() byte {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			continue
		}
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) end() bool { return s.peek() == 0 && s.i == len(s.b) }

func (s *scanner) literal(lit string) bool {
	s.peek()
	if strings.HasPrefix(unsafe.String(unsafe.SliceData(s.b[s.i:]), len(s.b)-s.i), lit) {
		s.i += len(lit)
		return true
	}
	return false
}

// str reads a string: its raw contents, and whether it holds no escape.
func (s *scanner) str() (raw []byte, plain, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	start := s.i + 1
	// Most strings hold no escape: find the closing quote with
	// bytes.IndexByte, which reads many bytes at a time, and walk byte by
	// byte only a string with a backslash before its first quote.
	if q := bytes.IndexByte(s.b[start:], '"'); q >= 0 && bytes.IndexByte(s.b[start:start+q], '\\') < 0 {
		s.i = start + q + 1
		return s.b[start : start+q], true, true
	}
	plain = true
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			plain = false
			j++
		case '"':
			s.i = j + 1
			return s.b[start:j], plain, true
		}
	}
	return nil, false, false
}

// object reads an object at nesting depth, calling field with s at each
// value; strict refuses a key with an escape or a non-ASCII byte.
func (s *scanner) object(strict bool, depth int, field func(key []byte) bool) bool {
	if s.peek() != '{' || depth > quickDepth {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		key, plain, ok := s.str()
		if !ok || (strict && (!plain || !ascii(key))) || s.peek() != ':' {
			return false
		}
		s.i++
		if !field(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// skip reads one value at nesting depth; false if a number in it is
// beyond float64's range, or it nests deeper than quickDepth.
func (s *scanner) skip(depth int) bool {
	switch c := s.peek(); {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{':
		return s.object(false, depth, func([]byte) bool { return s.skip(depth + 1) })
	case c == '[':
		if depth > quickDepth {
			return false
		}
		s.i++
		if s.peek() == ']' {
			s.i++
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		var ok bool
		s.i, ok = number(s.b, s.i)
		return ok
	}
	return false
}

// number reads the number that starts at b[i], in JSON that json.Valid
// accepted, and returns where it ends and whether it is within float64's
// range.
func number(b []byte, i int) (end int, ok bool) {
	j, exp := i, false
	for ; j < len(b); j++ {
		if c := b[j]; c == 'e' || c == 'E' {
			exp = true
		} else if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' {
			break
		}
	}
	if !exp && j-i <= maxPlainDigits {
		// Without an exponent, a number of fewer digits than float64's
		// largest has is within its range: no need to parse it.
		return j, true
	}
	_, err := strconv.ParseFloat(unsafe.String(&b[i], j-i), 64)
	return j, err == nil
}

// NumbersInRange reports whether every number in b, JSON that json.Valid
// accepts, is within float64's range: encoding/json refuses to decode one
// that is not into an any (mcp-go decodes a call's arguments so).
func NumbersInRange(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '-' || (c >= '0' && c <= '9'):
			j, ok := number(b, i)
			if !ok {
				return false
			}
			i = j - 1
		}
	}
	return true
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// foldEq is ASCII case-insensitive equality of key and the lower-case name.
func foldEq(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
