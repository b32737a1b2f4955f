package toolctx

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/toolmw/toolmw/internal/jsonclone"
)

// Details is a read-only view of what identifies a call, for hooks: the
// tool, the ids, the transport, the caller's subject and scopes, and the
// client's _meta. It has no arguments, no headers and no credentials.
//
// Its fields are reachable through methods only, and those that are slices
// or maps return copies, so a hook cannot change what the next hook or the
// handler sees. Taking one costs nothing: the copies are made when a method
// asks for them. The zero Details describes no call.
type Details struct {
	req *Request
}

// DetailsOf returns the details of req. Interceptors and handlers must not
// change a Request once the call has started; Details relies on that.
func DetailsOf(req *Request) Details { return Details{req: req} }

// IsZero reports whether d describes no call.
func (d Details) IsZero() bool { return d.req == nil }

// Tool returns the tool's name.
func (d Details) Tool() string {
	if d.req == nil {
		return ""
	}
	return d.req.Tool
}

// CallID returns the call's correlation id.
func (d Details) CallID() string {
	if d.req == nil {
		return ""
	}
	return d.req.CallID
}

// RequestID returns the HTTP request id, or "".
func (d Details) RequestID() string {
	if d.req == nil {
		return ""
	}
	return d.req.RequestID
}

// SessionID returns the MCP session id, or "".
func (d Details) SessionID() string {
	if d.req == nil {
		return ""
	}
	return d.req.SessionID
}

// Transport returns the transport.
func (d Details) Transport() Transport {
	if d.req == nil {
		return ""
	}
	return d.req.Transport
}

// TaskID returns the id of the task the call runs as, or "" (see
// [Request.TaskID]).
func (d Details) TaskID() string {
	if d.req == nil {
		return ""
	}
	return d.req.TaskID
}

// Round returns the round of a multi-round-trip call the call is (from 2
// on), or 0 for a first round or when nothing told (see [Request.Round]).
func (d Details) Round() int {
	if d.req == nil {
		return 0
	}
	return d.req.Round
}

// RoundOf returns the CallID of the first round of the multi-round-trip
// call this call is a later round of, or "".
func (d Details) RoundOf() string {
	if d.req == nil {
		return ""
	}
	return d.req.RoundOf
}

// Subject returns the authenticated caller's subject, or "".
func (d Details) Subject() string {
	if d.req == nil || d.req.Identity == nil {
		return ""
	}
	return d.req.Identity.Subject
}

// Scopes returns a copy of the authenticated caller's scopes.
func (d Details) Scopes() []string {
	if d.req == nil || d.req.Identity == nil {
		return nil
	}
	return slices.Clone(d.req.Identity.Scopes)
}

// Meta returns a deep copy of the client-supplied _meta (untrusted),
// without the protocol's reserved keys (see [ReservedMetaPrefix]), or nil
// without allocating when nothing is left.
func (d Details) Meta() map[string]any {
	if d.req == nil || len(d.req.Meta) == 0 {
		return nil // ranging over an empty map still costs an iterator
	}
	n := 0
	for k := range d.req.Meta {
		if !strings.HasPrefix(k, ReservedMetaPrefix) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make(map[string]any, n)
	for k, v := range d.req.Meta {
		if !strings.HasPrefix(k, ReservedMetaPrefix) {
			out[k] = jsonclone.Value(v)
		}
	}
	return out
}

// LogValue renders the details for slog, without _meta.
func (d Details) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("tool", d.Tool()), slog.String("call_id", d.CallID()))
	if v := d.RequestID(); v != "" {
		attrs = append(attrs, slog.String("request_id", v))
	}
	if v := d.SessionID(); v != "" {
		attrs = append(attrs, slog.String("session_id", v))
	}
	if v := d.Transport(); v != "" {
		attrs = append(attrs, slog.String("transport", string(v)))
	}
	if v := d.Subject(); v != "" {
		attrs = append(attrs, slog.String("subject", v))
	}
	if v := d.TaskID(); v != "" {
		attrs = append(attrs, slog.String("task_id", v))
	}
	if v := d.RoundOf(); v != "" {
		attrs = append(attrs, slog.Int("round", d.Round()), slog.String("round_of", v))
	}
	return slog.GroupValue(attrs...)
}
