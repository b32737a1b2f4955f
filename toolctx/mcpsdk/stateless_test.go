package mcpsdk_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// TestStatelessPropagateCancellation checks the README's way out of the
// stateless row: with go-sdk's PropagateRequestCancellation, a client's
// cancellation reaches the call on stateless streamable HTTP, and the row
// says canceled.
func TestStatelessPropagateCancellation(t *testing.T) {
	rec := &recorder{}
	s := buildServer(rec, toolctx.TransportUnknown)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
	defer srv.Close()
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	require.NoError(t, err, "connect")
	defer cs.Close()
	f := &fixture{name: "http-stateless-propagate", session: cs, received: &capture{}, records: rec.snapshot, changed: rec.changed}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // once the handler runs: sooner, the call might not be sent
		f.awaitRecords(func(r []record) bool { return len(forCase(r, "entered", 1)) == 1 })
		cancel()
	}()
	_, err = f.call(t, ctx, "block", map[string]any{"id": 1, "wait_ms": time.Minute.Milliseconds()}, 1)
	require.True(t, errors.Is(err, context.Canceled), "the client sees its cancellation: %v", err)
	recs := f.waitRecords(t, func(r []record) bool { return len(forCase(r, "after", 1)) == 1 })
	require.Equal(t, string(errs.CodeCanceled), forCase(recs, "after", 1)[0].Code, "the cancellation reached the call")
}
