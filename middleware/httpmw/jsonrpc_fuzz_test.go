package httpmw

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzAppendJSONString checks the hand-written escaper against
// encoding/json as the oracle: for any string, the result is one JSON
// string, valid UTF-8, that decodes to what json.Marshal's encoding of the
// same string decodes to (invalid UTF-8 becomes U+FFFD, byte by byte). The
// seeds run as a test on every go test.
func FuzzAppendJSONString(f *testing.F) {
	for _, seed := range []string{
		"", "plain", `quote " and backslash \`, "<script>&amp;</script>",
		"\x00\x01\x1f\x7f", "tab\tnew\nline\r", "日本語 é 😀",
		"\xff", "a\xc3(b", "\xed\xa0\x80", // invalid UTF-8: a lone byte, a bad pair, a surrogate
		"\u2028\u2029",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendJSONString([]byte("prefix:"), s)
		require.Equal(t, "prefix:", string(out[:7]), "the escaper appends to its argument")
		out = out[7:]
		require.True(t, json.Valid(out), "%q -> %q is JSON", s, out)
		require.True(t, utf8.Valid(out), "%q -> %q is valid UTF-8", s, out)
		var got string
		require.NoError(t, json.Unmarshal(out, &got), "%q -> %q is one JSON string", s, out)

		oracle, err := json.Marshal(s)
		require.NoError(t, err)
		var want string
		require.NoError(t, json.Unmarshal(oracle, &want))
		require.Equal(t, want, got, "%q -> %q decodes as encoding/json's %q", s, out, oracle)
	})
}
