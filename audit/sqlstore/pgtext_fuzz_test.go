package sqlstore

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzPGJSON checks pgJSON against encoding/json as the oracle: for any JSON
// text, the result is JSON, valid UTF-8 and free of \u0000 escapes, and it
// decodes to what encoding/json decodes from the input (invalid UTF-8
// replaced as bytes.ToValidUTF8 does) with every NUL character, in keys and
// values, replaced by U+FFFD. The seeds run as a test on every go test.
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

		want := decodeJSON(t, bytes.ToValidUTF8(in, []byte("\uFFFD")))
		got := decodeJSON(t, out)
		require.Equal(t, replaceNUL(want), got, "%q -> %q", in, out)
		require.False(t, containsNUL(got), "no NUL survives: %q -> %q", in, out)
	})
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
