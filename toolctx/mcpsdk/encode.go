package mcpsdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// The SDK encodes a result only when it writes the response, after every
// middleware: a failure there hangs the call or panics its connection's
// goroutine. So the adapter encodes every part of a result that can fail
// inside the chain (docs/adapters/mcpsdk.md, "Encoding inside the chain").

// errUnencodable is the cause of a result that cannot be encoded; the
// encoder's error (or panic) is wrapped in it.
var errUnencodable = errors.New("mcpsdk: the tool's result cannot be encoded as JSON")

// errUnreadable is the cause of a result whose content blocks, as go-sdk
// encodes them, are not what the protocol allows (checkBlock).
var errUnreadable = errors.New("mcpsdk: the tool's result cannot be read")

// encodeResult checks that the SDK can encode r and returns it with the
// structured content and every _meta value encoded (json.RawMessage), so
// that each is encoded once: r itself when there was nothing to encode, or
// a copy; r is never changed.
func encodeResult(r *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	meta, err := adapter.EncodeMeta(r.Meta)
	if err != nil {
		return nil, fmt.Errorf("%w: _meta: %w", errUnencodable, err)
	}
	if r.InputRequests != nil {
		// An input-required result goes out as it is; it must encode.
		if _, err := adapter.Encode(r.InputRequests); err != nil {
			return nil, fmt.Errorf("%w: input requests: %w", errUnencodable, err)
		}
	}
	for i, c := range r.Content {
		if err := checkBlock(c); err != nil {
			return nil, fmt.Errorf("%w: content[%d]: %w", errUnreadable, i, err)
		}
	}
	content, err := encodeContent(r.Content)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnencodable, err)
	}
	var sc any
	if r.StructuredContent != nil {
		raw, err := adapter.EncodeValue(r.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("%w: structured content: %w", errUnencodable, err)
		}
		if _, encoded := r.StructuredContent.(json.RawMessage); !encoded {
			sc = raw
		}
	}
	if meta == nil && content == nil && sc == nil {
		return r, nil
	}
	c := *r
	if meta != nil {
		c.Meta = meta
	}
	if content != nil {
		c.Content = content
	}
	if sc != nil {
		c.StructuredContent = sc
	}
	return &c, nil
}

// checkBlock returns why c, sent as go-sdk encodes it, is not a content
// block the protocol's schema allows in a tool result (ContentBlock,
// schema/2025-11-25), or nil; a client that checks the schema (the
// TypeScript SDK's does) refuses the whole result. go-sdk leaves out an
// empty resource link's uri and name, and encodes sampling content
// (tool_use, tool_result) in a tool result as it would in a sampling
// message.
func checkBlock(c mcp.Content) error {
	if nilBlock(c) {
		return errors.New("the block is nil")
	}
	switch c := c.(type) {
	case *mcp.ResourceLink:
		if c.URI == "" || c.Name == "" {
			return errors.New("a resource link needs its uri and its name")
		}
	case *mcp.EmbeddedResource:
		switch r := c.Resource; {
		case r == nil:
			return errors.New("an embedded resource needs its resource")
		case r.URI == "":
			return errors.New("an embedded resource needs its uri")
		}
	//lint:ignore SA1019 sampling content is deprecated (SEP-2577), and a tool result must not carry it either way
	case *mcp.ToolUseContent, *mcp.ToolResultContent:
		return fmt.Errorf("a %T is sampling content, which a tool result cannot carry", c)
	}
	return nil
}

// emptyText reports whether r is a text resource with an empty text, which
// go-sdk leaves out (omitempty) where the protocol's schema requires it.
func emptyText(r *mcp.ResourceContents) bool { return r != nil && r.Text == "" && r.Blob == nil }

// emptyTextResource is an embedded resource whose text is empty, encoded
// with its "text" field.
type emptyTextResource struct{ *mcp.EmbeddedResource }

// MarshalJSON is the embedded resource's encoding with "text":"" added to
// its resource.
func (e emptyTextResource) MarshalJSON() ([]byte, error) {
	b, err := e.EmbeddedResource.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var block map[string]json.RawMessage
	if err := json.Unmarshal(b, &block); err != nil {
		return nil, err
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(block["resource"], &res); err != nil {
		return nil, err
	}
	res["text"] = json.RawMessage(`""`)
	if block["resource"], err = json.Marshal(res); err != nil {
		return nil, err
	}
	return json.Marshal(block)
}

// nilBlock reports whether c is nil or a nil pointer.
func nilBlock(c mcp.Content) bool {
	v := reflect.ValueOf(c)
	return c == nil || (v.Kind() == reflect.Pointer && v.IsNil())
}

// encodeContent returns a copy of content blocks with every _meta encoded,
// or nil when no block has one; it checks the annotations' priority (a
// float), and encodes a kind it does not know to check it.
func encodeContent(cs []mcp.Content) ([]mcp.Content, error) {
	var out []mcp.Content
	for i, c := range cs {
		// with copies the block with its _meta m (when not nil); force:
		// copy it even when m is nil.
		var (
			meta  mcp.Meta
			ann   *mcp.Annotations
			with  func(m mcp.Meta) mcp.Content
			force bool
		)
		switch c := c.(type) { // no block is nil (checkBlock)
		case *mcp.TextContent:
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content { cc := *c; cc.Meta = m; return &cc }
		case *mcp.ImageContent:
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content { cc := *c; cc.Meta = m; return &cc }
		case *mcp.AudioContent:
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content { cc := *c; cc.Meta = m; return &cc }
		case *mcp.ResourceLink:
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content { cc := *c; cc.Meta = m; return &cc }
		case *mcp.EmbeddedResource:
			var rmeta mcp.Meta
			if c.Resource != nil {
				var err error
				if rmeta, err = adapter.EncodeMeta(c.Resource.Meta); err != nil {
					return nil, fmt.Errorf("content[%d]: resource: _meta: %w", i, err)
				}
			}
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content {
				cc := *c
				if m != nil {
					cc.Meta = m
				}
				if rmeta != nil {
					rc := *c.Resource
					rc.Meta = rmeta
					cc.Resource = &rc
				}
				if emptyText(cc.Resource) {
					return emptyTextResource{&cc}
				}
				return &cc
			}
			force = rmeta != nil || emptyText(c.Resource)
		default:
			if _, err := adapter.Encode(c); err != nil {
				return nil, fmt.Errorf("content[%d]: %w", i, err)
			}
			continue
		}
		if ann != nil && (math.IsNaN(ann.Priority) || math.IsInf(ann.Priority, 0)) {
			return nil, fmt.Errorf("content[%d]: annotations: the priority %v is not a JSON number", i, ann.Priority)
		}
		m, err := adapter.EncodeMeta(meta)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: _meta: %w", i, err)
		}
		if m != nil || force {
			if out == nil {
				out = append(make([]mcp.Content, 0, len(cs)), cs...)
			}
			out[i] = with(m)
		}
	}
	return out, nil
}
