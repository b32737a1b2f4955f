package sqlstore

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestPGTextKeepsValidTextAndReplacesTheRest(t *testing.T) {
	assert.Equal(t, "plain 日本語 'quoted'", pgText("plain 日本語 'quoted'"), "valid text passes unchanged")
	assert.Equal(t, "a\uFFFDb", pgText("a\x00b"), "a NUL byte becomes U+FFFD")
	assert.Equal(t, "x\uFFFDy", pgText("x\xffy"), "an invalid byte becomes U+FFFD")
	got := pgText("\x00\xff\xc3\x28")
	assert.True(t, utf8.ValidString(got) && !strings.ContainsRune(got, 0), "the result is storable: %q", got)
}

func TestPGToolIsBoundedOnARuneBoundary(t *testing.T) {
	short := strings.Repeat("t", 128)
	assert.Equal(t, short, pgTool(short), "a registered tool name (at most 128 bytes) is kept whole")
	long := strings.Repeat("é", 2000) // 2 bytes each
	got := pgTool(long)
	assert.LessOrEqual(t, len(got), maxPGTool, "a long unknown tool name is cut to the index's bound")
	assert.True(t, utf8.ValidString(got), "the cut falls on a rune boundary")
}

func TestPGJSONReplacesOnlyRealNULEscapes(t *testing.T) {
	in := []byte(`{"a":"x\u0000y","b":"\\u0000 is text","c":"\\\u0000"}`)
	out := pgJSON(in)
	var v map[string]string
	assert.NoError(t, json.Unmarshal(out, &v), "the output is still JSON: %s", out)
	assert.Equal(t, "x\uFFFDy", v["a"], "an escaped NUL becomes U+FFFD")
	assert.Equal(t, `\u0000 is text`, v["b"], "an escaped backslash followed by u0000 is left alone")
	assert.Equal(t, "\\\uFFFD", v["c"], "a backslash, then an escaped NUL")

	valid := []byte(`{"k":"v"}`)
	assert.Same(t, &valid[0], &pgJSON(valid)[0], "valid JSON without NUL is returned without a copy")
	assert.True(t, utf8.Valid(pgJSON([]byte("\"\xff\""))), "invalid UTF-8 in JSON text is replaced")
}
