package mcpsdk

import (
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// NewFrameGuard returns go-sdk's frame guard (see adapter.FrameGuard): it
// decides, as go-sdk's decoders would, whether the SDK can decode a
// JSON-RPC frame, and answers one it cannot with a fixed message, logging
// the decoder's text to the fallback logger. [GuardTransport] uses it;
// give it to httpmw.CheckFrames in front of mcp.NewStreamableHTTPHandler
// and mcp.NewSSEHandler. The options are the adapter's (only
// WithFallbackLogger matters here); a bad one panics.
func NewFrameGuard(opts ...Option) *adapter.FrameGuard {
	return newFrameGuard(mustConfig("NewFrameGuard", opts))
}

// GuardTransport returns t with every incoming message checked before
// go-sdk decodes it, so that what the SDK's decoder would say of a bad one
// (Go type names, "json: cannot unmarshal ...") never reaches the client:
//
//	err := server.Run(ctx, mcpsdk.GuardTransport(&mcp.StdioTransport{}))
//
// go-sdk has no hook before it decodes a message, and a server's transport
// is whatever the caller hands to Server.Run or Server.Connect, so the
// adapter cannot do this by itself.
//
// On an [*mcp.StdioTransport], an [*mcp.IOTransport] or an
// [*mcp.InMemoryTransport] the guard reads each line (one message or a
// batch; these transports delimit messages by newlines) before the SDK
// does, and answers one the SDK could not decode itself, with a fixed
// JSON-RPC error (the request's id when it could be read, else null):
// params of the wrong shape, and an envelope the SDK refuses ("id":{},
// "jsonrpc":"1.0", invalid JSON, nesting deeper than 1000), which would
// otherwise end the connection for every call on it. So is a batch on a
// session of protocol 2025-06-18 or later, which go-sdk refuses by closing
// the connection. A line longer than the transport's MaxLineLength ends
// the connection, as the SDK's own limit does. A notification the SDK
// could not decode is dropped (the SDK drops it too, after logging). The
// kit's [adapter.FrameGuard.Stream] does all this; the connection is still
// go-sdk's own, which learns the session's protocol version.
//
// Any other transport carries messages the SDK decodes inside the
// transport; there the guard checks each request's params before the
// server decodes them and answers one that does not decode with the fixed
// error; an envelope the transport cannot decode ends that connection, as
// it does without the guard.
//
// The options are the adapter's (only WithFallbackLogger matters here); a
// bad one panics.
func GuardTransport(t mcp.Transport, opts ...Option) mcp.Transport {
	g := newFrameGuard(mustConfig("GuardTransport", opts))
	switch t := t.(type) {
	case *mcp.StdioTransport:
		return ioTransport(g, os.Stdin, nopCloser{os.Stdout}, t.MaxLineLength)
	case *mcp.IOTransport:
		return ioTransport(g, t.Reader, t.Writer, t.MaxLineLength)
	case *mcp.InMemoryTransport:
		if p, ok := inMemoryPipe(t); ok {
			return ioTransport(g, p, p, 0) // go-sdk's default bound, as its own
		}
	}
	return &guardedTransport{inner: t, g: g}
}

func ioTransport(g *adapter.FrameGuard, r io.ReadCloser, w io.WriteCloser, limit int) *mcp.IOTransport {
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	gr, gw := g.Stream(r, w, limit) // a negative limit is none, for both
	return &mcp.IOTransport{Reader: gr, Writer: gw, MaxLineLength: limit}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// inMemoryPipe returns the pipe under an *mcp.InMemoryTransport (its one
// field, unexported): go-sdk's connection over it learns the session's
// protocol version through a method of its own that no wrapper of the
// connection can forward (mcp/transport.go, serverConnection's
// sessionUpdated, unexported), and refuses batches by it. Guarding the
// pipe keeps go-sdk's connection, as on stdio. false when this go-sdk's
// InMemoryTransport is not that one field (TestGuardInMemoryKeepsVersion
// fails then).
func inMemoryPipe(t *mcp.InMemoryTransport) (io.ReadWriteCloser, bool) {
	v := reflect.ValueOf(t).Elem()
	rwc := reflect.TypeFor[io.ReadWriteCloser]()
	if v.NumField() != 1 || v.Type().Field(0).Type != rwc {
		return nil, false
	}
	f := v.Field(0)
	p, _ := reflect.NewAt(rwc, unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(io.ReadWriteCloser)
	return p, p != nil
}

// guardedTransport checks the params of the requests its connection
// reads.
type guardedTransport struct {
	inner mcp.Transport
	g     *adapter.FrameGuard
}

func (t *guardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardedConn{Connection: c, g: t.g}, nil
}

// guardedConn is the guard on a connection that decodes messages itself.
// It hides nothing go-sdk's server asks of a connection but the
// unexported sessionUpdated, which only go-sdk's stream connection has,
// and GuardTransport guards those streams below the connection instead.
type guardedConn struct {
	mcp.Connection
	g *adapter.FrameGuard
}

func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok {
			return msg, err
		}
		r := c.g.CheckParams(ctx, req.Method, req.Params, !req.ID.IsValid())
		if r == nil {
			return msg, nil
		}
		if r.Notification {
			continue
		}
		if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: int64(r.Code), Message: r.Message}}); err != nil {
			return nil, err
		}
	}
}

func (c *guardedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	return c.Connection.Write(ctx, scrubResponse(msg))
}

// scrubResponse is msg with a decoder's text in its error replaced
// (adapter.ScrubError), keeping the SDK's code.
func scrubResponse(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return msg
	}
	var code int64
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) {
		code = we.Code
	}
	code, text, scrubbed := adapter.ScrubError(code, resp.Error.Error())
	if !scrubbed {
		return msg
	}
	out := *resp
	out.Error = &jsonrpc.Error{Code: code, Message: text}
	return &out
}
