package mcpsdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
)

// The SDK encodes a tool's result only when it writes the response, after
// every middleware has returned; if that fails (a chan, a func or a NaN in
// the structured content or a _meta, a cyclic value, a MarshalJSON that
// fails or panics, bytes that are not JSON in a json.RawMessage) it sends
// nothing, so the call hangs, or its connection goroutine panics; a value
// nested too deep is sent, and the SDK's client closes its session. The
// adapter therefore encodes, or checks, every part of a result that can
// fail, inside the chain: an unencodable result is then an ordinary raw
// failure, scrubbed for the client and named in diagnostics and the row.

// errUnencodable is the cause of a result that cannot be encoded; the
// encoder's error (or panic) is wrapped in it.
var errUnencodable = errors.New("mcpsdk: the tool's result cannot be encoded as JSON")

// encodeResult checks that the SDK can encode r, and hands the SDK its
// structured content already encoded, as a json.RawMessage, so that it is
// encoded once. It returns r itself when there was nothing to encode, or a
// copy. A panic in a MarshalJSON method is returned as an error holding an
// [*errs.PanicError].
func encodeResult(r *mcp.CallToolResult) (out *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, fmt.Errorf("%w: %w", errUnencodable, errs.NewPanicError(v))
		}
	}()
	if err := checkMeta(r.Meta); err != nil {
		return nil, fmt.Errorf("%w: _meta: %w", errUnencodable, err)
	}
	if err := checkContent(r.Content); err != nil {
		return nil, fmt.Errorf("%w: %w", errUnencodable, err)
	}
	if r.StructuredContent == nil {
		return r, nil
	}
	raw, err := encodeValue(r.StructuredContent)
	if err != nil {
		return nil, fmt.Errorf("%w: structured content: %w", errUnencodable, err)
	}
	if raw == nil {
		return r, nil
	}
	c := *r
	c.StructuredContent = raw
	return &c, nil
}

// encodeValue encodes v as the SDK's encoder does (no HTML escaping). A
// json.RawMessage is only checked (it is sent as it is); it returns nil then.
func encodeValue(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if raw != nil && !json.Valid(raw) {
			return nil, errors.New("the json.RawMessage is not valid JSON")
		}
		return nil, checkDepth(raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	if err := checkDepth(b); err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// checkMeta checks that a _meta map can be encoded.
func checkMeta(m map[string]any) error {
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return checkDepth(b)
}

// maxDepth is how deep a part of a result may nest. The SDK's decoder
// refuses a message that nests deeper than 1000 objects and arrays
// (internal/json, defaultMaxDepth), and its client then closes the
// session; a part of a result sits at most 5 levels down in the message
// (the message, the result, the content list, a block, its resource).
const maxDepth = 1000 - 5

// checkDepth fails if the JSON b nests deeper than maxDepth.
func checkDepth(b []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return fmt.Errorf("the value nests deeper than %d levels, more than MCP clients decode", maxDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// checkContent checks the parts of content blocks that can fail to encode:
// their _meta, the annotations' priority (a float), and every field of a
// kind the adapter does not know. Texts, data and URIs always encode.
func checkContent(cs []mcp.Content) error {
	for i, c := range cs {
		var (
			meta mcp.Meta
			ann  *mcp.Annotations
			more mcp.Meta
		)
		switch c := c.(type) {
		case nil:
			continue
		case *mcp.TextContent:
			if c == nil {
				continue
			}
			meta, ann = c.Meta, c.Annotations
		case *mcp.ImageContent:
			if c == nil {
				continue
			}
			meta, ann = c.Meta, c.Annotations
		case *mcp.AudioContent:
			if c == nil {
				continue
			}
			meta, ann = c.Meta, c.Annotations
		case *mcp.ResourceLink:
			if c == nil {
				continue
			}
			meta, ann = c.Meta, c.Annotations
		case *mcp.EmbeddedResource:
			if c == nil {
				continue
			}
			meta, ann = c.Meta, c.Annotations
			if c.Resource != nil {
				more = c.Resource.Meta
			}
		default:
			if _, err := json.Marshal(c); err != nil {
				return fmt.Errorf("content[%d]: %w", i, err)
			}
			continue
		}
		if err := checkMeta(meta); err != nil {
			return fmt.Errorf("content[%d]: _meta: %w", i, err)
		}
		if err := checkMeta(more); err != nil {
			return fmt.Errorf("content[%d]: resource _meta: %w", i, err)
		}
		if ann != nil && (math.IsNaN(ann.Priority) || math.IsInf(ann.Priority, 0)) {
			return fmt.Errorf("content[%d]: annotations: the priority %v is not a JSON number", i, ann.Priority)
		}
	}
	return nil
}
