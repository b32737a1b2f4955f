package toolmwtest

import (
	"context"
	"net/http"
	"net/http/httptest"
)

// Client is an SDK's client connected to the server under test, as a
// [Kit]'s Dial returns it; the kit makes it the [Conn] its runs use.
type Client[R any] struct {
	// Transport names the transport in reports; empty: the [Transport]'s
	// own name.
	Transport string
	// ListTools lists the server's tools, as the client decoded them.
	ListTools func(ctx context.Context) ([]Tool, error)
	// CallTool calls a tool and returns its result as the SDK's client
	// decoded it (read with the Kit's Answer); its error is the client's
	// (a protocol error, a broken connection), not the tool's isError
	// result.
	CallTool func(ctx context.Context, name string, args map[string]any) (R, error)
	// Close ends the client's session; the kit then stops what Dial
	// started ([Wire.OnClose]).
	Close func()
}

// Wire is what a [Kit] hands its SDK's Dial for one connection: the
// recorder of every byte the client receives, an httptest server for the
// HTTP transports, and what to stop when the connection closes.
type Wire struct {
	// Received is where every byte the client receives must go: the
	// client of [Wire.HTTP] records into it, and a pipe's reader is teed
	// into it with [Recorder.Tee].
	Received *Recorder

	wrap  func(http.Handler) http.Handler
	stops []func()
}

// HTTP serves h, wrapped by the run's HTTP middleware, on an httptest
// server on 127.0.0.1, closed when the connection closes; it returns the
// server's URL and an HTTP client that records every response into
// [Wire.Received].
func (w *Wire) HTTP(h http.Handler) (url string, client *http.Client) {
	srv := httptest.NewServer(w.wrap(h))
	w.OnClose(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL, &http.Client{Transport: w.Received.HTTPTransport(http.DefaultTransport)}
}

// OnClose registers stop to run when the connection closes (after the
// client's Close), or when Dial fails; the stops run in the order they
// were registered.
func (w *Wire) OnClose(stop func()) { w.stops = append(w.stops, stop) }

func (w *Wire) close() {
	for _, stop := range w.stops {
		stop()
	}
}

// connect serves s over tr with the SDK's Dial, its HTTP handler wrapped
// by wrap, and returns the client as a Conn: its results read with the
// SDK's Answer, its liveness probe a tools/list (ping is gone from
// protocol 2026-07-28, and mcp-go's Ping sends nothing there).
func (k Kit[S, R]) connect(ctx context.Context, s S, wrap func(http.Handler) http.Handler, tr Transport) (Conn, error) {
	if wrap == nil {
		wrap = func(h http.Handler) http.Handler { return h }
	}
	w := &Wire{Received: new(Recorder), wrap: wrap}
	c, err := k.Dial(ctx, s, tr, w)
	if err != nil {
		w.close()
		return Conn{}, err
	}
	name := c.Transport
	if name == "" {
		name = tr.String()
	}
	return Conn{
		Transport: name,
		ListTools: c.ListTools,
		CallTool: func(ctx context.Context, tool string, args map[string]any) (Answer, error) {
			res, err := c.CallTool(ctx, tool, args)
			if err != nil {
				return Answer{}, err
			}
			return k.Answer(res), nil
		},
		Alive: func(ctx context.Context) error {
			_, err := c.ListTools(ctx)
			return err
		},
		Received: w.Received,
		Close: func() {
			c.Close()
			w.close()
		},
	}, nil
}
