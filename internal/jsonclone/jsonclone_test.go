package jsonclone_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/internal/jsonclone"
)

func TestMap(t *testing.T) {
	assert.Nil(t, jsonclone.Map(map[string]any{}), "an empty map gives nil")
	assert.Nil(t, jsonclone.Map(nil), "nil gives nil")
	b := []byte("ab")
	inner := map[string]any{"k": "v"}
	list := []any{inner, 1.5}
	in := map[string]any{"b": b, "m": inner, "l": list, "s": "x"}
	out := jsonclone.Map(in)
	assert.Equal(t, in, out, "an equal copy")
	out["b"].([]byte)[0] = 'z'
	out["m"].(map[string]any)["k"] = "changed"
	out["l"].([]any)[1] = "changed"
	assert.Equal(t, "ab", string(b), "byte slices are copied")
	assert.Equal(t, "v", inner["k"], "maps are copied")
	assert.Equal(t, 1.5, list[1], "slices are copied")
}
