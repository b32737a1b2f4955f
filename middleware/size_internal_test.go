package middleware

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
)

// randomWireString mixes the characters encoding/json treats specially.
func randomWireString(r *rand.Rand) string {
	pieces := []string{"a", "Z", " ", "\"", "\\", "\n", "\t", "\b", "\f", "\x00", "\x1f", "<", ">", "&",
		"é", "€", "😀", "\u2028", "\u2029", "\xff", "\xe2\x82", "/", "'"}
	var b strings.Builder
	for n := r.Intn(40); n > 0; n-- {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	return b.String()
}

// encoding/json is the oracle: the size MaxResultBytes counts is what
// the SDKs' encoder writes.
func TestJSONStringSizeMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 5000; i++ {
		s := randomWireString(r)
		b, err := json.Marshal(s)
		require.NoError(t, err, "marshal")
		require.Equal(t, len(b), jsonStringSize(s), "size of %q", s)

		budget := 2 + r.Intn(len(b)+2)
		cut := cutJSONString(s, budget)
		assert.True(t, strings.HasPrefix(s, cut), "the cut is a prefix of %q", s)
		assert.LessOrEqual(t, jsonStringSize(cut), budget, "the cut of %q fits in %d", s, budget)
		if cut != s {
			w, size := jsonCharSize(s[len(cut):])
			assert.Greater(t, jsonStringSize(cut)+w, budget, "the cut of %q is the longest that fits (next char %d bytes)", s, size)
		}
	}
}

func TestContentSizeMatchesEncodingJSON(t *testing.T) {
	data := []byte("\x00\x01binary<>&")
	for _, c := range []struct {
		item    toolctx.Content
		payload []string // the JSON values counted
	}{
		{&toolctx.Text{Text: "héllo <b>"}, []string{"héllo <b>"}},
		{&toolctx.Image{Data: data, MIMEType: "image/png"}, []string{"image/png"}},
		{&toolctx.ResourceLink{URI: "file:///a b", Name: "n", Title: "t", Description: "d\n", MIMEType: "text/plain"},
			[]string{"file:///a b", "n", "t", "d\n", "text/plain"}},
		{&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "u", MIMEType: "m", Text: "x\"y"}}, []string{"u", "m", "x\"y"}},
	} {
		want := 0
		for _, p := range c.payload {
			b, _ := json.Marshal(p)
			want += len(b)
		}
		if img, ok := c.item.(*toolctx.Image); ok {
			b, _ := json.Marshal(img.Data) // []byte encodes as quoted base64
			want += len(b)
		}
		assert.Equal(t, want, contentItemSize(c.item), "size of %T", c.item)
	}
	n, ok := structuredSize(map[string]any{"a": "<x>", "b": []int{1, 2}})
	require.True(t, ok, "encodable")
	b, _ := json.Marshal(map[string]any{"a": "<x>", "b": []int{1, 2}})
	assert.Equal(t, len(b), n, "structured content is its JSON")
	_, ok = structuredSize(make(chan int))
	assert.False(t, ok, "unencodable structured content is reported")
}
