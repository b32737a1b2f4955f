package sqlstore

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// PostgreSQL refuses text with a NUL byte or invalid UTF-8, and jsonb with
// a \u0000 escape; one such value fails a whole COPY batch. Rows carry
// untrusted text (tool names and _meta from the client, raw error
// messages), so the PostgreSQL writer makes every value storable instead:
// each offending byte becomes U+FFFD. Valid values pass without a copy.

// maxPGTool bounds the tool column, which is indexed: a btree entry must fit
// in a third of a page. Registered tool names are at most 128 bytes; only a
// call to an unknown tool can be longer.
const maxPGTool = 1024

// pgText returns s with NUL bytes and invalid UTF-8 replaced by U+FFFD.
func pgText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// pgTool is pgText(s) cut to at most maxPGTool bytes on a rune boundary.
func pgTool(s string) string {
	s = pgText(s)
	if len(s) <= maxPGTool {
		return s
	}
	cut := maxPGTool
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// pgJSON returns JSON text that jsonb accepts and that decodes, with
// encoding/json, to what b decodes to, but for NUL: inside strings, each
// byte that is not part of valid UTF-8 becomes U+FFFD (one per byte, as
// encoding/json reads it), a \u escape of a UTF-16 surrogate that is not
// half of a pair becomes \ufffd (encoding/json reads U+FFFD; jsonb refuses
// it), and a \u0000 escape becomes \ufffd (jsonb refuses it; encoding/json
// would read NUL). b is JSON text (json.Valid); pgJSON returns b itself
// when there is nothing to change.
func pgJSON(b []byte) []byte {
	if b == nil || (utf8.Valid(b) && !hasBadEscape(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	inString := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case !inString:
			inString = c == '"'
			out = append(out, c)
			i++
		case c == '"':
			inString = false
			out = append(out, c)
			i++
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			r := hex4(b[i+2:])
			switch {
			case r == 0:
				out = append(out, `\ufffd`...)
				i += 6
			case r >= 0xd800 && r < 0xdc00 && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' &&
				hex4(b[i+8:]) >= 0xdc00 && hex4(b[i+8:]) < 0xe000:
				out = append(out, b[i:i+12]...) // a pair: one character
				i += 12
			case r >= 0xd800 && r < 0xe000:
				out = append(out, `\ufffd`...) // a lone half
				i += 6
			default:
				out = append(out, b[i:i+6]...)
				i += 6
			}
		case c == '\\' && i+1 < len(b):
			out = append(out, c, b[i+1]) // copied whole, so that "\\" never starts an escape
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// hasBadEscape reports whether b may hold a \u escape that jsonb refuses:
// \u0000 or a UTF-16 surrogate. It may say yes for text that only looks
// like one ("\\u0000"); pgJSON then finds nothing to change.
func hasBadEscape(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u`))
		if i < 0 || i+6 > len(b) {
			return false
		}
		if r := hex4(b[i+2:]); r == 0 || (r >= 0xd800 && r < 0xe000) {
			return true
		}
		b = b[i+2:]
	}
}

// hex4 returns the value of the 4 hex digits b starts with, or -1.
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	v := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		v = v<<4 | int(c)
	}
	return v
}
