package jsonclone

import "slices"

// Map returns a deep copy of m, or nil for an empty map.
func Map(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = Value(v)
	}
	return out
}

// Value returns a deep copy of v: maps, slices and byte slices are copied,
// anything else is returned as it is.
func Value(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = Value(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Value(e)
		}
		return out
	case []byte:
		return slices.Clone(t)
	}
	return v
}
