package jsonclone

import "reflect"

// Public returns a deep copy of m (as [Map]) in which every value that is
// an error, or holds one (a struct field, a pointer, a list element, at any
// depth), is replaced by withheld(err): a public error's detail crosses to
// the client, and an error value's JSON encoding shows its exported fields
// (an *fs.PathError's path, a *url.Error's URL) or whatever its MarshalJSON
// writes. changed reports that something was replaced; m is returned
// unchanged (not copied) when nothing was.
func Public(m map[string]any, withheld func(error) any) (out map[string]any, changed bool) {
	if len(m) == 0 {
		return nil, false
	}
	if !anyError(m) {
		return m, false
	}
	return publicMap(m, withheld), true
}

func publicMap(m map[string]any, withheld func(error) any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = publicValue(v, withheld)
	}
	return out
}

func publicValue(v any, withheld func(error) any) any {
	switch t := v.(type) {
	case map[string]any:
		return publicMap(t, withheld)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = publicValue(e, withheld)
		}
		return out
	case error:
		return withheld(t)
	}
	if holdsError(reflect.ValueOf(v), 0, new(int)) {
		return withheld(nil)
	}
	return Value(v)
}

// anyError reports whether m holds an error anywhere.
func anyError(m map[string]any) bool {
	budget := 0
	for _, v := range m {
		if holdsError(reflect.ValueOf(v), 0, &budget) {
			return true
		}
	}
	return false
}

var errorType = reflect.TypeFor[error]()

// maxDepth and maxVisits bound the walk of holdsError; a value beyond them
// counts as holding an error (the safe side).
const (
	maxDepth  = 32
	maxVisits = 100_000
)

// holdsError reports whether v is an error or holds one in an exported
// struct field, a pointer, an interface, a list, an array or a map value.
func holdsError(v reflect.Value, depth int, visits *int) bool {
	if !v.IsValid() {
		return false
	}
	if *visits++; depth > maxDepth || *visits > maxVisits {
		return true
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return false
	}
	if v.Type().Implements(errorType) {
		return true
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && holdsError(v.Elem(), depth+1, visits)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && holdsError(v.Field(i), depth+1, visits) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false // bytes
		}
		for i := range v.Len() {
			if holdsError(v.Index(i), depth+1, visits) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if holdsError(it.Value(), depth+1, visits) {
				return true
			}
		}
	}
	return false
}
