package jsonclone_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/internal/jsonclone"
)

func TestPublic(t *testing.T) {
	withheld := func(error) any { return "withheld" }
	clean := map[string]any{"s": "x", "n": 1.0, "l": []any{"a", map[string]any{"k": true}}, "b": []byte("ab")}
	out, changed := jsonclone.Public(clean, withheld)
	assert.False(t, changed, "nothing to withhold")
	assert.Equal(t, clean, out, "as it was")

	type holder struct {
		Name string
		Err  error
	}
	var nilErr *fs.PathError
	in := map[string]any{
		"err":    errors.New("secret"),
		"nested": map[string]any{"list": []any{"ok", &fs.PathError{Path: "/secret"}}},
		"struct": holder{Name: "n", Err: errors.New("secret")},
		"ptr":    &holder{Err: errors.New("secret")},
		"nilptr": nilErr,
		"plain":  holder{Name: "n"},
	}
	out, changed = jsonclone.Public(in, withheld)
	require.True(t, changed, "errors are withheld")
	assert.Equal(t, "withheld", out["err"], "an error")
	assert.Equal(t, []any{"ok", "withheld"}, out["nested"].(map[string]any)["list"], "an error in a nested list")
	assert.Equal(t, "withheld", out["struct"], "a struct holding an error")
	assert.Equal(t, "withheld", out["ptr"], "a pointer to a struct holding an error")
	assert.Equal(t, "withheld", out["nilptr"], "a typed nil error is an error value too")
	assert.Equal(t, holder{Name: "n"}, out["plain"], "a struct holding no error stays")
	assert.IsType(t, errors.New(""), in["err"], "the input is not changed")
}
