package sqlstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzPGJSON checks pgJSON against encoding/json as the oracle: for any JSON
// text, the result is JSON, valid UTF-8, free of the escapes jsonb refuses
// (\u0000 and a UTF-16 surrogate that is not half of a pair), and it
// decodes to what encoding/json decodes from the input itself (which reads
// each byte of invalid UTF-8 and each lone surrogate as U+FFFD) with every
// NUL character, in keys and values, replaced by U+FFFD. The seeds run as a
// test on every go test.
func FuzzPGJSON(f *testing.F) {
	for _, seed := range []string{
		`{"k":"v"}`,
		`{"a":"x\u0000y","b":"\\u0000 is text","c":"\\\u0000"}`,
		`{"\u0000key":["\u0000",1,null,true,{"n":"\\\\u0000"}]}`,
		"\"\xff\xfe\"",
		`"\u0000\u0000\\"`,
		`"tail\\"`,
		`[1.5e300,-0,"\ud83d\ude00","\u00e9"]`,
		"{\"raw\":\"\x00\"}", // not JSON: a raw control character
		`["\ud800","\udc00","\uDBFF\uDFFF","\ud800\ud800\udc00","\udc00\ud800","\ud800\u0041","\ud800\u0000","\\ud800"]`,
		`{"\ud83d":"\ude00x"}`,
		"[\"\xe2\x82\", \"\xf0\x9f\x98\", \"\xed\xa0\x80\", \"ok \xc3\xa9\"]", // cut and surrogate UTF-8: one U+FFFD a byte
		"\"\xff\\u0000\\ud800\"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return // pgJSON is given JSON text only
		}
		orig := bytes.Clone(in)
		out := pgJSON(in)
		require.Equal(t, orig, in, "pgJSON must not change its input")
		require.True(t, json.Valid(out), "the result is JSON: %q -> %q", in, out)
		require.True(t, utf8.Valid(out), "the result is valid UTF-8: %q -> %q", in, out)

		require.NoError(t, jsonbEscapes(out), "jsonb takes the escapes: %q -> %q", in, out)

		want := decodeJSON(t, in)
		got := decodeJSON(t, out)
		require.Equal(t, replaceNUL(want), got, "%q -> %q", in, out)
		require.False(t, containsNUL(got), "no NUL survives: %q -> %q", in, out)
	})
}

// jsonbEscapes returns an error for a \u escape that PostgreSQL's jsonb
// refuses: \u0000, or a UTF-16 surrogate that is not half of a pair.
func jsonbEscapes(b []byte) error {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if b[i+1] != 'u' {
			i++ // an escaped character, "\\" included
			continue
		}
		r, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 32)
		switch {
		case r == 0:
			return fmt.Errorf("\\u0000 at %d", i)
		case r >= 0xd800 && r < 0xdc00:
			if i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return fmt.Errorf("a high surrogate alone at %d", i)
			}
			lo, _ := strconv.ParseUint(string(b[i+8:i+12]), 16, 32)
			if lo < 0xdc00 || lo >= 0xe000 {
				return fmt.Errorf("a high surrogate without its low half at %d", i)
			}
			i += 11
		case r >= 0xdc00 && r < 0xe000:
			return fmt.Errorf("a low surrogate alone at %d", i)
		default:
			i += 5
		}
	}
	return nil
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v), "decoding %q", b)
	return v
}

// replaceNUL returns v with NUL replaced by U+FFFD in every string and key.
func replaceNUL(v any) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, "\x00", "\uFFFD")
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = replaceNUL(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[strings.ReplaceAll(k, "\x00", "\uFFFD")] = replaceNUL(e)
		}
		return out
	default:
		return v
	}
}

func containsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case []any:
		for _, e := range v {
			if containsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.IndexByte(k, 0) >= 0 || containsNUL(e) {
				return true
			}
		}
	}
	return false
}
