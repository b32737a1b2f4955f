package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The upstream's requests to a client (sampling, elicitation) go to the
// call they belong to. The protocol names it only by where the request
// travels: a streamable HTTP upstream sends it on the response stream of
// the tools/call POST it belongs to. go-sdk's client merges every stream
// into one before its handlers see them, so the proxy marks each request
// as its bytes come off a call's stream (routeRoundTripper): it adds the
// call's key to the request's _meta under routeMeta, which the handler
// reads and removes before the client sees the request.
//
// A stdio or HTTP+SSE upstream sends every request on one stream that
// names no call. The proxy then routes by session: to the one call in
// flight, or to the one client session whose calls are in flight; with
// calls of several sessions in flight it refuses the request rather than
// ask a client whose call it is not.

// routeMeta is the _meta key that carries a call's route key from the
// upstream's stream to the proxy's handler; no client ever sees it.
const routeMeta = "io.github.toolmw/proxy-call"

// routeKey is the context key under which a forwarded call's context
// carries its route key, which reaches the HTTP request of its POST.
type routeKey struct{}

// routeRoundTripper marks the requests on the response stream of a call's
// POST with that call's key.
type routeRoundTripper struct{ next http.RoundTripper }

func (t routeRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	key, ok := r.Context().Value(routeKey{}).(string)
	if err != nil || !ok || resp.Body == nil {
		return resp, err
	}
	resp.Body = &routeReader{r: resp.Body, key: key}
	return resp, nil
}

// routeReader passes an SSE stream through line by line, adding the
// route key to the _meta of the requests to the client in its data lines.
type routeReader struct {
	r    io.ReadCloser
	key  string
	line []byte // the line being read
	out  []byte // what is ready to be returned
	err  error
}

func (rr *routeReader) Read(b []byte) (int, error) {
	for len(rr.out) == 0 && rr.err == nil {
		buf := make([]byte, 32<<10)
		n, err := rr.r.Read(buf)
		chunk := buf[:n]
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				rr.line = append(rr.line, chunk...)
				break
			}
			rr.line = append(rr.line, chunk[:i+1]...)
			rr.out = append(rr.out, rr.mark(rr.line)...)
			rr.line = rr.line[:0]
			chunk = chunk[i+1:]
		}
		if err != nil {
			rr.out = append(rr.out, rr.line...) // a last line without its newline
			rr.line = nil
			rr.err = err
		}
	}
	n := copy(b, rr.out)
	rr.out = rr.out[n:]
	if len(rr.out) == 0 {
		return n, rr.err
	}
	return n, nil
}

func (rr *routeReader) Close() error { return rr.r.Close() }

// toClient are the methods of the requests the upstream sends a client.
var toClient = [][]byte{[]byte(`"sampling/createMessage"`), []byte(`"elicitation/create"`), []byte(`"roots/list"`)}

// mark returns line, with the route key added when it is the data line of
// a request to the client.
func (rr *routeReader) mark(line []byte) []byte {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !slices.ContainsFunc(toClient, func(m []byte) bool { return bytes.Contains(data, m) }) {
		return line
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(data, &msg) != nil || msg["id"] == nil {
		return line
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil || !slices.ContainsFunc(toClient, func(m []byte) bool { return string(m) == `"`+method+`"` }) {
		return line
	}
	var params map[string]json.RawMessage
	if msg["params"] == nil && method == "roots/list" {
		params = map[string]json.RawMessage{} // roots/list may come without params
	} else if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return line
	}
	meta := map[string]json.RawMessage{}
	if params["_meta"] != nil && json.Unmarshal(params["_meta"], &meta) != nil {
		return line
	}
	meta[routeMeta], _ = json.Marshal(rr.key)
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return append(append([]byte("data: "), out...), '\n')
}

// takeRoute removes the route key from an upstream request's _meta, and
// returns it ("" when there is none, or when the upstream cannot have
// sent it on a call's stream: then the upstream wrote it itself).
func (p *proxy) takeRoute(m mcp.Meta) (mcp.Meta, string) {
	v, ok := m[routeMeta]
	if !ok {
		return m, ""
	}
	out := make(mcp.Meta, len(m)-1)
	for k, x := range m {
		if k != routeMeta {
			out[k] = x
		}
	}
	if len(out) == 0 {
		out = nil
	}
	key, _ := v.(string)
	if !p.httpUpstream {
		key = ""
	}
	return out, key
}

// newRouteKey is the route key of a call about to be forwarded.
func (p *proxy) newRouteKey() string {
	return "c" + strconv.FormatInt(p.routeSeq.Add(1), 10)
}

// callFor is the call an upstream request goes to (see the top of this
// file): the call key names, or the one session's. askClient (proxy.go)
// sends the request in a context that carries that call's (so that the SDK
// sends it on the call's own stream, as the upstream did) and ends with
// the upstream's request.
func (p *proxy) callFor(key string) (*inFlight, error) {
	p.callsMu.Lock()
	defer p.callsMu.Unlock()
	if key != "" {
		for _, c := range p.calls {
			if c.key == key {
				return c, nil
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the call this request belongs to has ended"}
	}
	if len(p.calls) == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the proxy has no call in flight to ask a client for"}
	}
	last := p.calls[len(p.calls)-1]
	sessions := 0
	seen := map[*mcp.ServerSession]bool{}
	for _, c := range p.calls {
		if !seen[c.session] {
			seen[c.session] = true
			sessions++
		}
	}
	if sessions > 1 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("the proxy cannot tell which of its %d client sessions with calls in flight this request is for: the upstream's transport names no call", sessions)}
	}
	return last, nil
}
