package errs

import "fmt"

// ToolNameError reports a tool name outside the MCP specification's rules
// (1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'). It is returned
// at registration, never at call time.
type ToolNameError struct {
	Name   string
	Reason string
}

// Error names the tool and the rule it broke.
func (e *ToolNameError) Error() string {
	return fmt.Sprintf("invalid tool name %q: %s", e.Name, e.Reason)
}

// SchemaKind says which of a tool's schemas a [ToolSchemaError] is about.
type SchemaKind string

// The schemas a tool has.
const (
	SchemaInput  SchemaKind = "input"
	SchemaOutput SchemaKind = "output"
	SchemaMeta   SchemaKind = "metadata"
)

// ToolSchemaError reports a tool schema that does not compile or is not
// allowed, at registration.
type ToolSchemaError struct {
	Tool   string
	Schema SchemaKind
	Err    error
}

// Error names the tool, the schema and the cause.
func (e *ToolSchemaError) Error() string {
	return fmt.Sprintf("tool %q: invalid %s schema: %v", e.Tool, e.Schema, e.Err)
}

// Unwrap returns the cause.
func (e *ToolSchemaError) Unwrap() error { return e.Err }

// CheckToolName returns a [*ToolNameError] when name breaks the MCP
// specification's rules for tool names, and nil otherwise.
func CheckToolName(name string) error {
	if name == "" {
		return &ToolNameError{Name: name, Reason: "it is empty"}
	}
	if len(name) > 128 {
		return &ToolNameError{Name: name, Reason: fmt.Sprintf("it is %d bytes long; the limit is 128", len(name))}
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			// Decode the rune so a non-ASCII name is reported by the
			// character the user wrote, not by its first UTF-8 byte.
			return &ToolNameError{Name: name, Reason: fmt.Sprintf("byte %d (%q) is not one of A-Z a-z 0-9 _ - .", i, c)}
		}
	}
	return nil
}
