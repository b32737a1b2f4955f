package mcpsdk

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// fromSDKContent converts the SDK's content to toolmw's. Nil blocks and
// content kinds a tool result cannot carry (tool_use, tool_result: sampling
// only) are dropped: a result that holds them is not sent (checkBlock).
func fromSDKContent(in []mcp.Content) []toolctx.Content {
	if in == nil {
		return nil
	}
	out := make([]toolctx.Content, 0, len(in))
	for _, c := range in {
		if nilBlock(c) {
			continue
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			out = append(out, &toolctx.Text{Text: c.Text, Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta})
		case *mcp.ImageContent:
			out = append(out, &toolctx.Image{Data: c.Data, MIMEType: c.MIMEType, Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta})
		case *mcp.AudioContent:
			out = append(out, &toolctx.Audio{Data: c.Data, MIMEType: c.MIMEType, Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta})
		case *mcp.ResourceLink:
			out = append(out, &toolctx.ResourceLink{
				URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
				MIMEType: c.MIMEType, Size: c.Size, Icons: convert(c.Icons, fromSDKIcon),
				Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta,
			})
		case *mcp.EmbeddedResource:
			e := &toolctx.EmbeddedResource{Annotations: fromSDKAnnotations(c.Annotations), Meta: c.Meta}
			if r := c.Resource; r != nil {
				e.Resource = toolctx.ResourceContents{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Blob: r.Blob, Meta: r.Meta}
			}
			out = append(out, e)
		}
	}
	return out
}

// toSDKContent converts toolmw's content to the SDK's. It never returns nil,
// so the result encodes as [] rather than null.
func toSDKContent(in []toolctx.Content) []mcp.Content {
	out := make([]mcp.Content, 0, len(in))
	for _, c := range in {
		switch c := c.(type) {
		case *toolctx.Text:
			out = append(out, &mcp.TextContent{Text: c.Text, Annotations: toSDKAnnotations(c.Annotations), Meta: c.Meta})
		case *toolctx.Image:
			out = append(out, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: toSDKAnnotations(c.Annotations), Meta: c.Meta})
		case *toolctx.Audio:
			out = append(out, &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: toSDKAnnotations(c.Annotations), Meta: c.Meta})
		case *toolctx.ResourceLink:
			out = append(out, &mcp.ResourceLink{
				URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
				MIMEType: c.MIMEType, Size: c.Size, Icons: convert(c.Icons, toSDKIcon),
				Annotations: toSDKAnnotations(c.Annotations), Meta: c.Meta,
			})
		case *toolctx.EmbeddedResource:
			r := c.Resource
			out = append(out, &mcp.EmbeddedResource{
				Resource:    &mcp.ResourceContents{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Blob: r.Blob, Meta: r.Meta},
				Annotations: toSDKAnnotations(c.Annotations), Meta: c.Meta,
			})
		}
	}
	return out
}

func fromSDKAnnotations(a *mcp.Annotations) *toolctx.Annotations {
	if a == nil {
		return nil
	}
	out := &toolctx.Annotations{LastModified: a.LastModified}
	if len(a.Audience) > 0 {
		out.Audience = convert(a.Audience, func(r mcp.Role) toolctx.Role { return toolctx.Role(r) })
	}
	// The SDK encodes a zero priority as absent: 0 and unset are the same
	// on the wire.
	if a.Priority != 0 {
		p := a.Priority
		out.Priority = &p
	}
	return out
}

func toSDKAnnotations(a *toolctx.Annotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	out := &mcp.Annotations{LastModified: a.LastModified}
	if len(a.Audience) > 0 {
		out.Audience = convert(a.Audience, func(r toolctx.Role) mcp.Role { return mcp.Role(r) })
	}
	if a.Priority != nil {
		out.Priority = *a.Priority
	}
	return out
}

func fromSDKIcon(ic mcp.Icon) toolctx.Icon {
	return toolctx.Icon{Src: ic.Source, MIMEType: ic.MIMEType, Sizes: ic.Sizes, Theme: string(ic.Theme)}
}

func toSDKIcon(ic toolctx.Icon) mcp.Icon {
	return mcp.Icon{Source: ic.Src, MIMEType: ic.MIMEType, Sizes: ic.Sizes, Theme: mcp.IconTheme(ic.Theme)}
}

// convert maps each element of in with f; nil stays nil.
func convert[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
