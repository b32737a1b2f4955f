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

// nulEscape is how JSON writes a NUL character.
var nulEscape = []byte(`\u0000`)

// pgJSON returns JSON text that jsonb accepts: invalid UTF-8 replaced and
// every \u0000 escape (not an escaped backslash followed by "u0000")
// replaced by \ufffd. It returns b itself when there is nothing to change.
func pgJSON(b []byte) []byte {
	if b == nil || (utf8.Valid(b) && !bytes.Contains(b, nulEscape)) {
		return b
	}
	b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		// An escape: copy it whole, so that "\\" never starts a match.
		if bytes.HasPrefix(b[i:], nulEscape) {
			out = append(out, `\ufffd`...)
			i += len(nulEscape) - 1
			continue
		}
		out = append(out, c, b[i+1])
		i++
	}
	return out
}
