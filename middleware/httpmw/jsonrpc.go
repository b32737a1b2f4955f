package httpmw

import (
	"net/http"
	"unicode/utf8"

	"github.com/toolmw/toolmw/errs"
)

// writeJSONError answers r with status and a small JSON body whose message
// is public: a JSON-RPC error object with a null id, which MCP clients
// parse, carrying only fixed or public text. The same code and message go to
// the HTTP audit row (audit.HTTP), when there is one outside.
func writeJSONError(w http.ResponseWriter, r *http.Request, status int, code errs.Code, rpcCode int, message string) {
	reportPublic(r.Context(), errs.Public{Code: code, Message: message})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(jsonRPCError(rpcCode, message))
}

func jsonRPCError(code int, message string) []byte {
	b := make([]byte, 0, 96+len(message))
	b = append(b, `{"jsonrpc":"2.0","id":null,"error":{"code":`...)
	b = appendInt(b, code)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, message)
	b = append(b, "}}\n"...)
	return b
}

func appendInt(b []byte, n int) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

// appendJSONString appends s as a JSON string: quote, backslash and control
// characters escaped, and <, >, & as encoding/json escapes them; an invalid
// UTF-8 byte becomes \ufffd, so the body is valid UTF-8 whatever the message.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}
