package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// appendRecords appends recs to b as the JSON array a spool frame holds,
// without reflection: with [DurabilityDisk] every group commit encodes its
// rows on the calls' path, and json.Marshal of a batch was 3% of the
// demo's CPU (its reflection, and a new buffer per batch that the
// collector then had to find). The array is what encoding/json decodes
// back into the same rows (Spool.read does): the field names are
// Record's, a zero field is left out (it decodes as zero), and what has no
// fixed shape (Detail and ClientMeta, maps of any value) goes through
// json.Marshal, which fails the batch as it did before for a value JSON
// cannot hold. A nil Arguments is left out too, where json.Marshal wrote
// null (decoded back as the four bytes "null", which the store kept as
// JSON null rather than no arguments).
func appendRecords(b []byte, recs []Record) ([]byte, error) {
	b = append(b, '[')
	for i := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendRecord(b, &recs[i]); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendRecord appends one row as a JSON object.
func appendRecord(b []byte, r *Record) ([]byte, error) {
	b = append(b, '{')
	start := len(b)
	key := func(name string) {
		if len(b) > start {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	str := func(name, v string) {
		if v != "" {
			key(name)
			b = appendJSONString(b, v)
		}
	}
	num := func(name string, v int64) {
		if v != 0 {
			key(name)
			b = strconv.AppendInt(b, v, 10)
		}
	}
	anyMap := func(name string, m map[string]any) error {
		if len(m) == 0 {
			return nil
		}
		j, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("json: %s: %w", name, err)
		}
		key(name)
		b = append(b, j...)
		return nil
	}
	if !r.Time.IsZero() {
		key("Time")
		b = append(b, '"')
		var err error
		// AppendText writes what MarshalJSON quotes, and refuses what it
		// refuses (a year outside 0-9999).
		if b, err = r.Time.AppendText(b); err != nil {
			return nil, fmt.Errorf("json: Time: %w", err)
		}
		b = append(b, '"')
	}
	str("Kind", string(r.Kind))
	str("CallID", r.CallID)
	str("RequestID", r.RequestID)
	str("SessionID", r.SessionID)
	str("Transport", r.Transport)
	str("Tool", r.Tool)
	str("Subject", r.Subject)
	str("TaskID", r.TaskID)
	str("Outcome", string(r.Outcome))
	str("Code", string(r.Code))
	str("Message", r.Message)
	if err := anyMap("Detail", r.Detail); err != nil {
		return nil, err
	}
	num("Duration", int64(r.Duration))
	if err := anyMap("ClientMeta", r.ClientMeta); err != nil {
		return nil, err
	}
	if len(r.Arguments) > 0 {
		key("Arguments")
		// As json.Marshal does with a RawMessage: checked, and compacted.
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, r.Arguments); err != nil {
			return nil, fmt.Errorf("json: Arguments: %w", err)
		}
		b = buf.Bytes()
	}
	if len(r.Notes) > 0 {
		key("Notes")
		b = append(b, '[')
		for i, n := range r.Notes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Key":`...)
			b = appendJSONString(b, n.Key)
			b = append(b, `,"Value":`...)
			b = appendJSONString(b, n.Value)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	str("Method", r.Method)
	str("Path", r.Path)
	num("Status", int64(r.Status))
	num("RequestBytes", int64(r.RequestBytes))
	num("ResponseBytes", int64(r.ResponseBytes))
	num("ContentBlocks", int64(r.ContentBlocks))
	str("TraceID", r.TraceID)
	str("SpanID", r.SpanID)
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string. It decodes to what
// json.Marshal's encoding of s decodes to: invalid UTF-8 becomes U+FFFD,
// as there.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	done := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[done:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			done = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[done:i]...)
			b = append(b, `\ufffd`...)
			i += size
			done = i
			continue
		}
		i += size
	}
	b = append(b, s[done:]...)
	return append(b, '"')
}
