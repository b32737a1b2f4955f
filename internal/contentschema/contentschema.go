package contentschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schema is ContentBlock as the MCP schema of 2025-11-25 defines it, each
// kind with its required fields, its type's constant and the uri format,
// written from the schema's facts (the descriptions and optional fields
// left out: they constrain nothing here).
const schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "array",
  "items": {"anyOf": [
    {"$ref": "#/$defs/TextContent"}, {"$ref": "#/$defs/ImageContent"}, {"$ref": "#/$defs/AudioContent"},
    {"$ref": "#/$defs/ResourceLink"}, {"$ref": "#/$defs/EmbeddedResource"}
  ]},
  "$defs": {
    "TextContent": {"type": "object", "required": ["text", "type"],
      "properties": {"type": {"const": "text"}, "text": {"type": "string"}}},
    "ImageContent": {"type": "object", "required": ["data", "mimeType", "type"],
      "properties": {"type": {"const": "image"}, "data": {"type": "string"}, "mimeType": {"type": "string"}}},
    "AudioContent": {"type": "object", "required": ["data", "mimeType", "type"],
      "properties": {"type": {"const": "audio"}, "data": {"type": "string"}, "mimeType": {"type": "string"}}},
    "ResourceLink": {"type": "object", "required": ["name", "type", "uri"],
      "properties": {"type": {"const": "resource_link"}, "name": {"type": "string"}, "uri": {"type": "string", "format": "uri"}}},
    "EmbeddedResource": {"type": "object", "required": ["resource", "type"],
      "properties": {"type": {"const": "resource"}, "resource": {"anyOf": [
        {"type": "object", "required": ["text", "uri"], "properties": {"text": {"type": "string"}, "uri": {"type": "string", "format": "uri"}}},
        {"type": "object", "required": ["blob", "uri"], "properties": {"blob": {"type": "string"}, "uri": {"type": "string", "format": "uri"}}}
      ]}}}
  }
}`

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(schema)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem:///contentblock.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("mem:///contentblock.json")
})

// Check returns why the JSON array content (a tool result's "content") is
// not a list of the protocol's content blocks, or nil.
func Check(content json.RawMessage) error {
	sch, err := compiled()
	if err != nil {
		return fmt.Errorf("contentschema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(content))
	if err != nil {
		return fmt.Errorf("contentschema: the content is not JSON: %w", err)
	}
	return sch.Validate(v)
}

// CheckResult is Check on the "content" of the JSON tool result result.
func CheckResult(result []byte) error {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("contentschema: the result is not a JSON object: %w", err)
	}
	if r.Content == nil {
		return fmt.Errorf("contentschema: the result has no content")
	}
	return Check(r.Content)
}
