package mcpsdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx/adapter"
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

// encodeResult checks that the SDK can encode r and hands it every part
// that a user's type can make fail already encoded, as json.RawMessage: the
// structured content and each value of every _meta (the result's, each
// content block's, each embedded resource's). The SDK then only copies
// those bytes, so they are encoded once, and a MarshalJSON that would fail
// or panic the second time is not called again. It returns r itself when
// there was nothing to encode, or a copy; it never changes r or anything r
// points to. A panic in a MarshalJSON method is returned as an error
// holding an [*errs.PanicError] (see adapter.Encode).
func encodeResult(r *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	meta, err := encodeMeta(r.Meta)
	if err != nil {
		return nil, fmt.Errorf("%w: _meta: %w", errUnencodable, err)
	}
	if r.InputRequests != nil {
		// An input-required result goes out as it is; it must encode.
		if _, err := adapter.Encode(r.InputRequests); err != nil {
			return nil, fmt.Errorf("%w: input requests: %w", errUnencodable, err)
		}
	}
	content, err := encodeContent(r.Content)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnencodable, err)
	}
	var sc any
	if r.StructuredContent != nil {
		raw, err := encodeValue(r.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("%w: structured content: %w", errUnencodable, err)
		}
		if raw != nil {
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

// encodeValue encodes v as the SDK's encoder does (no HTML escaping). A
// json.RawMessage is only checked (it is sent as it is); it returns nil then.
func encodeValue(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if raw != nil && !json.Valid(raw) {
			return nil, errors.New("the json.RawMessage is not valid JSON")
		}
		return nil, adapter.CheckDepth(raw)
	}
	return adapter.Encode(v)
}

// encodeStructured encodes structured content: as encodeValue, and a
// valid json.RawMessage is returned as it is.
func encodeStructured(v any) (json.RawMessage, error) {
	raw, err := encodeValue(v)
	if err == nil && raw == nil {
		raw, _ = v.(json.RawMessage)
	}
	return raw, err
}

// encodeMeta returns a copy of a _meta map whose values are encoded, or nil
// when m has nothing to encode.
func encodeMeta(m map[string]any) (mcp.Meta, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		raw, err := encodeValue(v)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%q: %w", k, err)
		case raw == nil:
			out[k] = v // a valid json.RawMessage already
		default:
			out[k] = raw
		}
	}
	return out, nil
}

// encodeContent returns a copy of content blocks with every _meta encoded
// (encodeMeta), or nil when no block has one. It also checks what else can
// fail: the annotations' priority (a float), and every field of a kind the
// adapter does not know (it cannot be copied, so it is encoded here and
// again by the SDK). Texts, data and URIs always encode.
func encodeContent(cs []mcp.Content) ([]mcp.Content, error) {
	var out []mcp.Content
	for i, c := range cs {
		// meta is the block's _meta; with copies the block with its _meta
		// encoded (m, when not nil); force: copy it even when m is nil.
		var (
			meta  mcp.Meta
			ann   *mcp.Annotations
			with  func(m mcp.Meta) mcp.Content
			force bool
		)
		switch c := c.(type) {
		case nil:
			// Encoded as null, which the SDK's client refuses.
			return nil, fmt.Errorf("content[%d] is nil", i)
		case *mcp.TextContent:
			if c == nil {
				continue
			}
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content { cc := *c; cc.Meta = m; return &cc }
		case *mcp.ImageContent:
			if c == nil {
				continue
			}
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content { cc := *c; cc.Meta = m; return &cc }
		case *mcp.AudioContent:
			if c == nil {
				continue
			}
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content { cc := *c; cc.Meta = m; return &cc }
		case *mcp.ResourceLink:
			if c == nil {
				continue
			}
			meta, ann, with = c.Meta, c.Annotations, func(m mcp.Meta) mcp.Content { cc := *c; cc.Meta = m; return &cc }
		case *mcp.EmbeddedResource:
			if c == nil {
				continue
			}
			var rmeta mcp.Meta
			if c.Resource != nil {
				var err error
				if rmeta, err = encodeMeta(c.Resource.Meta); err != nil {
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
				return &cc
			}
			force = rmeta != nil
		default:
			if _, err := adapter.Encode(c); err != nil {
				return nil, fmt.Errorf("content[%d]: %w", i, err)
			}
			continue
		}
		if ann != nil && (math.IsNaN(ann.Priority) || math.IsInf(ann.Priority, 0)) {
			return nil, fmt.Errorf("content[%d]: annotations: the priority %v is not a JSON number", i, ann.Priority)
		}
		m, err := encodeMeta(meta)
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
