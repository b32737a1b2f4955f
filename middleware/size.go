package middleware

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// MaxArgBytes rejects a call whose raw arguments (the JSON the client sent,
// as the adapter received it) are longer than n bytes, before any
// interceptor inside it or the handler runs. The rejection is the public
// [errs.CodeInvalidArguments] error "the arguments are larger than the
// server allows", with detail {"max_bytes": n, "got_bytes": ...}; the audit
// row records its code; Diagnostics is not called.
//
// On streamable HTTP, bound the whole request body too
// (httpmw.MaxBodyBytes): MaxArgBytes sees the arguments only after the
// SDK has read and decoded them. A non-positive n panics, at construction.
// In observe mode ([Observe]) a call over the limit runs, noted
// "would_reject=max_arg_bytes".
func MaxArgBytes(n int) toolctx.Middleware {
	if n <= 0 {
		panic(fmt.Sprintf("middleware.MaxArgBytes: the limit must be positive, got %d", n))
	}
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if size := req.Arguments.Len(); size > n {
				return reject(ctx, guardMaxArgBytes, toolctx.ErrorResult(errs.InvalidArguments("the arguments are larger than the server allows").
					WithDetail(map[string]any{"max_bytes": n, "got_bytes": size})), next, req)
			}
			return next.CallTool(ctx, req)
		})
	}
}

// ResultLimitMode is what [MaxResultBytes] does with a result over its
// limit.
type ResultLimitMode int

const (
	// ResultReject replaces a result over the limit with the public
	// [errs.CodeResultTooLarge] error, detail {"max_bytes": n}. The audit
	// row has that code and the note "result_bytes" with the result's size.
	ResultReject ResultLimitMode = iota
	// ResultTruncate cuts a result over the limit down to it: the text
	// content is cut at a character boundary and ends with a visible marker
	// ("[truncated by the server: ...]"); content items that no longer fit
	// (images, resources) are dropped. The call stays a success, and the
	// audit row has the note "truncated_from_bytes" with the original size.
	// Structured content cannot be cut without breaking its schema: when it
	// alone is over the limit, the result is rejected as with ResultReject.
	ResultTruncate
)

// The note keys [MaxResultBytes] writes on the results it changes.
const (
	// NoteResultBytes is the size of a result rejected as too large.
	NoteResultBytes = "result_bytes"
	// NoteTruncatedFrom is the original size of a truncated result.
	NoteTruncatedFrom = "truncated_from_bytes"
)

// minTruncateBytes is the smallest limit ResultTruncate accepts: room for
// the marker and some text.
const minTruncateBytes = 256

// MaxResultBytes bounds what a call sends back: a result whose content plus
// structured content is larger than n bytes is rejected or truncated, as
// mode says. The size is counted as the bytes go over the wire, as
// encoding/json writes them: a text is its JSON string (quotes, escapes and
// all), images, audio and blobs are their base64, structured content is its
// JSON, and a resource's URI, name and other strings count as JSON strings.
// The fixed framing of the JSON-RPC envelope (field names, braces, tens of
// bytes per item) is not counted.
//
// Successful results and a handler's own isError results are measured; a
// raw failure is not, since the client only ever gets its public message,
// nor is an input-required result ([toolctx.CallResult.NeedsInput]), whose
// requests pass through uncut.
// Place it inside Recover, outside the interceptors that make results
// (ScrubSecrets, Cache), so that it measures what is sent. A non-positive
// n panics, and so does ResultTruncate with n below 256 bytes (no room for
// the marker), at construction. In observe mode ([Observe]) a result over
// the limit is sent as it is, noted "would_reject=max_result_bytes" and
// "would_result_bytes" or "would_truncated_from_bytes" with its size.
func MaxResultBytes(n int, mode ResultLimitMode) toolctx.Middleware {
	switch {
	case n <= 0:
		panic(fmt.Sprintf("middleware.MaxResultBytes: the limit must be positive, got %d", n))
	case mode != ResultReject && mode != ResultTruncate:
		panic(fmt.Sprintf("middleware.MaxResultBytes: unknown mode %d", mode))
	case mode == ResultTruncate && n < minTruncateBytes:
		panic(fmt.Sprintf("middleware.MaxResultBytes: a truncating limit must be at least %d bytes, got %d", minTruncateBytes, n))
	}
	tooLarge := errs.New(errs.CodeResultTooLarge, "the tool's result is larger than the server allows").
		WithDetail(map[string]any{"max_bytes": n})
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			res := next.CallTool(ctx, req)
			if res == nil || res.Cause() != nil || res.Error != nil || res.NeedsInput() {
				// An input-required result is sent without content: its
				// requests are never cut.
				return res
			}
			structured, ok := structuredSize(res.StructuredContent)
			if !ok {
				return res // unencodable: the adapter fails the call as an internal error
			}
			size := structured + contentSize(res.Content)
			if size <= n {
				return res
			}
			if mode == ResultTruncate && structured < n-minTruncateBytes/2 {
				return replace(ctx, guardMaxResultBytes, res, truncate(res, n-structured, size).WithNote(NoteTruncatedFrom, strconv.Itoa(size)))
			}
			return replace(ctx, guardMaxResultBytes, res, keepNotes(res, toolctx.ErrorResult(tooLarge)).WithNote(NoteResultBytes, strconv.Itoa(size)))
		})
	}
}

// truncate returns a copy of res whose content fits in budget bytes,
// marker included; size is the whole result's size.
func truncate(res *toolctx.CallResult, budget, size int) *toolctx.CallResult {
	marker := &toolctx.Text{Text: fmt.Sprintf("[truncated by the server: the result was %d bytes, over its limit]", size)}
	budget -= jsonStringSize(marker.Text) + 1 // the marker and a newline before it
	out := *res
	out.Content = make([]toolctx.Content, 0, len(res.Content)+1)
	for _, c := range res.Content {
		cs := contentItemSize(c)
		if cs <= budget {
			out.Content = append(out.Content, c)
			budget -= cs
			continue
		}
		if t, ok := c.(*toolctx.Text); ok && budget > 2 {
			cut := *t
			cut.Text = cutJSONString(t.Text, budget) + "\n" + marker.Text
			out.Content = append(out.Content, &cut)
			return &out
		}
		break
	}
	out.Content = append(out.Content, marker)
	return &out
}

// contentSize is the wire size of the content items.
func contentSize(content []toolctx.Content) int {
	n := 0
	for _, c := range content {
		n += contentItemSize(c)
	}
	return n
}

// contentItemSize is the wire size of one item's payload.
func contentItemSize(c toolctx.Content) int {
	switch c := c.(type) {
	case *toolctx.Text:
		return jsonStringSize(c.Text)
	case *toolctx.Image:
		return base64Size(len(c.Data)) + jsonStringSize(c.MIMEType)
	case *toolctx.Audio:
		return base64Size(len(c.Data)) + jsonStringSize(c.MIMEType)
	case *toolctx.ResourceLink:
		return jsonStringSize(c.URI) + jsonStringSize(c.Name) + jsonStringSize(c.Title) +
			jsonStringSize(c.Description) + jsonStringSize(c.MIMEType)
	case *toolctx.EmbeddedResource:
		r := &c.Resource
		n := jsonStringSize(r.URI) + jsonStringSize(r.MIMEType)
		if r.Text != "" {
			n += jsonStringSize(r.Text)
		}
		if len(r.Blob) > 0 {
			n += base64Size(len(r.Blob))
		}
		return n
	}
	return 0
}

// structuredSize is the size of v's JSON, and false when v cannot be
// encoded.
func structuredSize(v any) (int, bool) {
	switch v := v.(type) {
	case nil:
		return 0, true
	case json.RawMessage:
		return len(v), true
	}
	var w countingWriter
	if err := json.NewEncoder(&w).Encode(v); err != nil {
		return 0, false
	}
	return int(w) - 1, true // Encode ends with a newline the wire does not have
}

type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

// base64Size is the length of n bytes in standard base64, quoted.
func base64Size(n int) int { return (n+2)/3*4 + 2 }

// jsonStringSize is the length of s as encoding/json writes it (with its
// default HTML escaping), quotes included.
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		w, size := jsonCharSize(s[i:])
		n += w
		i += size
	}
	return n
}

// jsonCharSize is the encoded width of the first character of s, and how
// many bytes of s it spans.
func jsonCharSize(s string) (width, size int) {
	if b := s[0]; b < utf8.RuneSelf {
		switch {
		case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t' || b == '\b' || b == '\f':
			return 2, 1
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			return 6, 1 // \u00XX
		}
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
		return 6, size // \ufffd, \u2028, \u2029
	}
	return size, size
}

// cutJSONString returns the longest prefix of s, cut at a character
// boundary, whose JSON string is at most budget bytes.
func cutJSONString(s string, budget int) string {
	n := 2
	for i := 0; i < len(s); {
		w, size := jsonCharSize(s[i:])
		if n+w > budget {
			return s[:i]
		}
		n += w
		i += size
	}
	return s
}
