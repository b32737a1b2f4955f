package mcpgo

import (
	"strconv"
	"strings"
	"unsafe"
)

// quickToolsCall reports whether message (valid JSON: mcp-go decoded it
// before the hook) is a tools/call request that mcp-go surely decodes,
// reading it once without allocating. It answers true only for the shape
// every client sends — "method" and "params" with "name", "arguments" and
// "_meta" — with plain ASCII keys (encoding/json matches keys without
// regard to case, and with escapes or non-ASCII letters a key may name a
// field under another spelling) and every number within float64's range;
// anything else is false, "not known", and the guard decodes as mcp-go
// would. TestQuickToolsCallIsSafe holds it to mcp-go's own decode.
func quickToolsCall(message []byte) bool {
	s := scanner{b: message}
	sawMethod := false
	ok := s.object(true, func(key []byte) bool {
		switch {
		case foldEq(key, "method"):
			v, plain, ok := s.str()
			sawMethod = ok && plain && string(v) == "tools/call"
			return sawMethod
		case foldEq(key, "params"):
			return s.params()
		case foldEq(key, "jsonrpc"), foldEq(key, "id"):
			return s.skip() // decoded by mcp-go before the hook
		}
		return false
	})
	return ok && sawMethod && s.end()
}

// params reads the params of a tools/call request as mcp-go v1.2.1's
// CallToolParams.UnmarshalJSON decodes them: name a string, arguments any
// value (decoded into an any), _meta an object (decoded into a map).
func (s *scanner) params() bool {
	if s.literal("null") {
		return true
	}
	return s.object(true, func(key []byte) bool {
		switch {
		case foldEq(key, "name"):
			if s.literal("null") {
				return true
			}
			_, _, ok := s.str()
			return ok
		case foldEq(key, "arguments"):
			return s.skip()
		case foldEq(key, "_meta"):
			return s.literal("null") || (s.peek() == '{' && s.skip())
		}
		return false
	})
}

// scanner walks valid JSON.
type scanner struct {
	b []byte
	i int
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

// object reads an object, calling field with s at each value; strict
// refuses a key with an escape or a non-ASCII byte.
func (s *scanner) object(strict bool, field func(key []byte) bool) bool {
	if s.peek() != '{' {
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

// skip reads one value; false if a number in it is beyond float64's range.
func (s *scanner) skip() bool {
	switch c := s.peek(); {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{':
		return s.object(false, func([]byte) bool { return s.skip() })
	case c == '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return true
		}
		for {
			if !s.skip() {
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
		j := s.i
		for j < len(s.b) && strings.IndexByte("+-.eE0123456789", s.b[j]) >= 0 {
			j++
		}
		_, err := strconv.ParseFloat(unsafe.String(&s.b[s.i], j-s.i), 64)
		s.i = j
		return err == nil
	}
	return false
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
