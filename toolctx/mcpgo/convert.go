package mcpgo

import (
	"encoding/base64"
	"maps"
	"reflect"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/jsonclone"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// toMCP converts a normalized result into mcp-go's, public fields only; a
// failure's _meta is its public code and detail.
func toMCP(r *toolctx.CallResult) *mcp.CallToolResult {
	if r.NeedsInput() {
		return inputRequiredToMCP(r)
	}
	out := &mcp.CallToolResult{Content: contentToMCP(r.Content), IsError: r.IsError}
	if r.IsError {
		if r.Error != nil {
			pub := errs.Public{Code: r.Error.Code}
			if len(r.Error.Detail) > 0 {
				pub.Detail = jsonclone.Map(r.Error.Detail)
			}
			out.Meta = &mcp.Meta{AdditionalFields: map[string]any{toolctx.ErrorMetaKey: adapter.ErrorMeta(pub)}}
		}
		return out
	}
	out.StructuredContent = r.StructuredContent
	out.Meta = metaToMCP(r.Meta)
	return out
}

// metaToMCP wraps a _meta map, progressToken included.
func metaToMCP(m map[string]any) *mcp.Meta {
	if m == nil {
		return nil
	}
	return &mcp.Meta{AdditionalFields: m}
}

// metaMap returns the _meta as one map. It is m.AdditionalFields itself
// when there is no progress token (the Request is read-only).
func metaMap(m *mcp.Meta) map[string]any {
	if m == nil {
		return nil
	}
	if m.ProgressToken == nil {
		return m.AdditionalFields
	}
	out := make(map[string]any, len(m.AdditionalFields)+1)
	maps.Copy(out, m.AdditionalFields)
	out["progressToken"] = m.ProgressToken
	return out
}

func annotationsToMCP(a *toolctx.Annotations) mcp.Annotated {
	if a == nil {
		return mcp.Annotated{}
	}
	out := &mcp.Annotations{Priority: a.Priority, LastModified: a.LastModified}
	if a.Audience != nil {
		out.Audience = make([]mcp.Role, len(a.Audience))
		for i, r := range a.Audience {
			out.Audience[i] = mcp.Role(r)
		}
	}
	return mcp.Annotated{Annotations: out}
}

func annotationsFromMCP(a mcp.Annotated) *toolctx.Annotations {
	if a.Annotations == nil {
		return nil
	}
	out := &toolctx.Annotations{Priority: a.Annotations.Priority, LastModified: a.Annotations.LastModified}
	if a.Annotations.Audience != nil {
		out.Audience = make([]toolctx.Role, len(a.Annotations.Audience))
		for i, r := range a.Annotations.Audience {
			out.Audience[i] = toolctx.Role(r)
		}
	}
	return out
}

// contentToMCP converts toolctx content to mcp-go's. Icons of a
// ResourceLink are dropped: mcp-go v1.2 has no field for them.
func contentToMCP(cs []toolctx.Content) []mcp.Content {
	out := make([]mcp.Content, 0, len(cs))
	for _, c := range cs {
		switch c := c.(type) {
		case *toolctx.Text:
			out = append(out, mcp.TextContent{Annotated: annotationsToMCP(c.Annotations), Meta: metaToMCP(c.Meta), Type: mcp.ContentTypeText, Text: c.Text})
		case *toolctx.Image:
			out = append(out, mcp.ImageContent{Annotated: annotationsToMCP(c.Annotations), Meta: metaToMCP(c.Meta), Type: mcp.ContentTypeImage,
				Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType})
		case *toolctx.Audio:
			out = append(out, mcp.AudioContent{Annotated: annotationsToMCP(c.Annotations), Meta: metaToMCP(c.Meta), Type: mcp.ContentTypeAudio,
				Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType})
		case *toolctx.ResourceLink:
			out = append(out, mcp.ResourceLink{Annotated: annotationsToMCP(c.Annotations), Meta: metaToMCP(c.Meta), Type: mcp.ContentTypeLink,
				URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType, Size: c.Size})
		case *toolctx.EmbeddedResource:
			var rc mcp.ResourceContents
			if c.Resource.Blob != nil {
				rc = mcp.BlobResourceContents{Meta: c.Resource.Meta, URI: c.Resource.URI, MIMEType: c.Resource.MIMEType,
					Blob: base64.StdEncoding.EncodeToString(c.Resource.Blob)}
			} else {
				rc = mcp.TextResourceContents{Meta: c.Resource.Meta, URI: c.Resource.URI, MIMEType: c.Resource.MIMEType, Text: c.Resource.Text}
			}
			out = append(out, mcp.EmbeddedResource{Annotated: annotationsToMCP(c.Annotations), Meta: metaToMCP(c.Meta), Type: mcp.ContentTypeResource, Resource: rc})
		}
	}
	return out
}

// resultBuf is the memory of one converted result, held in the call: a
// result of one text block, what most tools return, then costs the call no
// allocation of its own (three otherwise: the result, its content and the
// block). A buf is used once: a result the chain holds is never written
// again.
type resultBuf struct {
	res     toolctx.CallResult
	text    toolctx.Text
	content [1]toolctx.Content
	used    bool
}

// fromMCPInto converts mcp-go's result for the chain, leaving out content
// kinds toolctx does not model (an unreplaced success is sent as it was),
// into buf's memory when buf is not nil and not used yet.
func fromMCPInto(r *mcp.CallToolResult, buf *resultBuf) *toolctx.CallResult {
	if buf != nil && buf.used {
		buf = nil
	}
	if r.NeedsInput() && !r.IsError {
		return &toolctx.CallResult{InputRequired: inputRequiredFromMCP(r), Meta: metaMap(r.Meta)}
	}
	var out *toolctx.CallResult
	if buf != nil {
		buf.used = true
		out = &buf.res
	} else {
		out = new(toolctx.CallResult)
	}
	out.IsError, out.StructuredContent = r.IsError, r.StructuredContent
	if r.StructuredContent == nil && len(r.RawStructuredContent) > 0 {
		out.StructuredContent = r.RawStructuredContent
	}
	if r.Meta != nil {
		out.Meta = metaMap(r.Meta)
	}
	if len(r.Content) == 1 && buf != nil {
		if tc := textFromMCP(r.Content[0], &buf.text); tc != nil {
			buf.content[0] = tc
			out.Content = buf.content[:1:1]
			return out
		}
	}
	if len(r.Content) > 0 {
		out.Content = make([]toolctx.Content, 0, len(r.Content))
		for _, c := range r.Content {
			if tc := contentFromMCP(c); tc != nil {
				out.Content = append(out.Content, tc)
			}
		}
	}
	return out
}

// textFromMCP is contentFromMCP for a text block, written into dst; nil
// for any other block.
func textFromMCP(c mcp.Content, dst *toolctx.Text) toolctx.Content {
	var t *mcp.TextContent
	switch c := c.(type) {
	case mcp.TextContent:
		t = &c
	case *mcp.TextContent:
		t = c
	}
	if t == nil {
		return nil
	}
	*dst = toolctx.Text{Text: t.Text, Annotations: annotationsFromMCP(t.Annotated), Meta: metaMap(t.Meta)}
	return dst
}

func contentFromMCP(c mcp.Content) toolctx.Content {
	v, ok := pointee(c)
	if !ok {
		return nil
	}
	switch c := v.(type) {
	case mcp.TextContent:
		return &toolctx.Text{Text: c.Text, Annotations: annotationsFromMCP(c.Annotated), Meta: metaMap(c.Meta)}
	case mcp.ImageContent:
		return &toolctx.Image{Data: decode64(c.Data), MIMEType: c.MIMEType, Annotations: annotationsFromMCP(c.Annotated), Meta: metaMap(c.Meta)}
	case mcp.AudioContent:
		return &toolctx.Audio{Data: decode64(c.Data), MIMEType: c.MIMEType, Annotations: annotationsFromMCP(c.Annotated), Meta: metaMap(c.Meta)}
	case mcp.ResourceLink:
		return &toolctx.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType,
			Size: c.Size, Annotations: annotationsFromMCP(c.Annotated), Meta: metaMap(c.Meta)}
	case mcp.EmbeddedResource:
		out := &toolctx.EmbeddedResource{Annotations: annotationsFromMCP(c.Annotated), Meta: metaMap(c.Meta)}
		r, _ := pointee(c.Resource) // a nil resource converts as none
		switch rc := r.(type) {
		case mcp.TextResourceContents:
			out.Resource = toolctx.ResourceContents{URI: rc.URI, MIMEType: rc.MIMEType, Text: rc.Text, Meta: rc.Meta}
		case mcp.BlobResourceContents:
			out.Resource = toolctx.ResourceContents{URI: rc.URI, MIMEType: rc.MIMEType, Blob: decode64(rc.Blob), Meta: rc.Meta}
		}
		return out
	}
	return nil
}

// pointee is what v points to when it is a pointer (mcp-go takes a block
// or a resource as a value or a pointer), and false for a nil pointer.
func pointee(v any) (any, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer {
		return v, true
	}
	if rv.IsNil() {
		return nil, false
	}
	return rv.Elem().Interface(), true
}

// decode64 decodes base64 data; data that is not valid base64 is kept as
// its bytes, so nothing is silently emptied.
func decode64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return []byte(s)
	}
	return b
}
