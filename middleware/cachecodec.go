package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolmw/toolmw/toolctx"
)

// The encoding of a result in a [CacheStore]: JSON, versioned, with one
// object per content item naming its kind. Only what a cached result can
// hold is encoded: a success's content, structured content and _meta.

const storedVersion = 1

type storedResult struct {
	V          int             `json:"v"`
	Content    []storedContent `json:"content,omitempty"`
	Structured json.RawMessage `json:"structured,omitempty"`
	Meta       map[string]any  `json:"meta,omitempty"`
}

// storedContent holds exactly one of its fields.
type storedContent struct {
	Text     *toolctx.Text             `json:"text,omitempty"`
	Image    *toolctx.Image            `json:"image,omitempty"`
	Audio    *toolctx.Audio            `json:"audio,omitempty"`
	Link     *toolctx.ResourceLink     `json:"link,omitempty"`
	Resource *toolctx.EmbeddedResource `json:"resource,omitempty"`
}

func encodeResult(res *toolctx.CallResult) ([]byte, error) {
	s := storedResult{V: storedVersion, Meta: res.Meta, Content: make([]storedContent, len(res.Content))}
	for i, c := range res.Content {
		switch c := c.(type) {
		case *toolctx.Text:
			s.Content[i].Text = c
		case *toolctx.Image:
			s.Content[i].Image = c
		case *toolctx.Audio:
			s.Content[i].Audio = c
		case *toolctx.ResourceLink:
			s.Content[i].Link = c
		case *toolctx.EmbeddedResource:
			s.Content[i].Resource = c
		default:
			return nil, fmt.Errorf("content item %d: %T is not a content kind the cache can store", i, c)
		}
	}
	switch v := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		s.Structured = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		s.Structured = b
	}
	return json.Marshal(s)
}

var errStoredValue = errors.New("not a cached result of this version")

func decodeResult(b []byte) (*toolctx.CallResult, error) {
	var s storedResult
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // numbers in _meta stay as they were written
	if err := d.Decode(&s); err != nil {
		return nil, err
	}
	if s.V != storedVersion {
		return nil, errStoredValue
	}
	res := &toolctx.CallResult{Meta: s.Meta, Content: make([]toolctx.Content, len(s.Content))}
	for i, c := range s.Content {
		switch {
		case c.Text != nil:
			res.Content[i] = c.Text
		case c.Image != nil:
			res.Content[i] = c.Image
		case c.Audio != nil:
			res.Content[i] = c.Audio
		case c.Link != nil:
			res.Content[i] = c.Link
		case c.Resource != nil:
			res.Content[i] = c.Resource
		default:
			return nil, errStoredValue
		}
	}
	if len(s.Structured) > 0 {
		res.StructuredContent = s.Structured
	}
	return res, nil
}
