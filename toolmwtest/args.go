package toolmwtest

import (
	"encoding/json"
	"fmt"
	"sort"
)

// call is one call to make: the arguments and what they are, for reports.
type call struct {
	shape string
	args  map[string]any
}

// argumentsFor returns the calls to make to one of the server's own tools,
// from its input schema as the server listed it (any JSON-encodable form):
// valid arguments, no arguments, and each property in turn given a value of
// the wrong type.
func argumentsFor(schema any) []call {
	var s jsonSchema
	if b, err := json.Marshal(schema); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	good := map[string]any{}
	for _, name := range s.propertyNames() {
		good[name] = s.Properties[name].example()
	}
	calls := []call{
		{shape: "valid arguments", args: good},
		{shape: "no arguments", args: map[string]any{}},
	}
	for _, name := range s.propertyNames() {
		bad := make(map[string]any, len(good))
		for k, v := range good {
			bad[k] = v
		}
		bad[name] = s.Properties[name].wrong()
		calls = append(calls, call{shape: fmt.Sprintf("wrong type for %q", name), args: bad})
	}
	return calls
}

// jsonSchema is the part of a JSON Schema that argument generation reads.
type jsonSchema struct {
	Type       any                    `json:"type"`
	Properties map[string]*jsonSchema `json:"properties"`
	Items      *jsonSchema            `json:"items"`
	Enum       []any                  `json:"enum"`
	Minimum    *float64               `json:"minimum"`
}

func (s *jsonSchema) propertyNames() []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// typ returns the schema's first type, "" when it has none.
func (s *jsonSchema) typ() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if e, ok := e.(string); ok && e != "null" {
				return e
			}
		}
	}
	return ""
}

// example returns a value that the schema accepts, as far as a simple
// reading of it tells.
func (s *jsonSchema) example() any {
	if s == nil {
		return "x"
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch s.typ() {
	case "integer", "number":
		if s.Minimum != nil && *s.Minimum > 1 {
			return *s.Minimum
		}
		return 1
	case "boolean":
		return true
	case "array":
		return []any{s.Items.example()}
	case "object":
		m := map[string]any{}
		for _, n := range s.propertyNames() {
			m[n] = s.Properties[n].example()
		}
		return m
	}
	return "toolmwtest"
}

// wrong returns a value of a type the schema does not accept.
func (s *jsonSchema) wrong() any {
	if s == nil {
		return nil
	}
	switch s.typ() {
	case "string":
		return 12345
	case "boolean", "array", "object":
		return "not-the-right-type"
	}
	return map[string]any{"not": "a number"}
}
