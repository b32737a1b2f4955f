package outside

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/hostileframes"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx/adapter"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// TestRefusedFramesHaveTheirRow: every frame httpmw.CheckFrames answers
// itself in front of go-sdk's streamable HTTP handler (hostile envelopes,
// params of the wrong shape: answered 400 with a null id, 200 with the
// request's id, or 202 for a notification) leaves an HTTP row saying it
// was refused, with the fixed message and no decoder text, so the
// operator sees it; a frame the SDK reads leaves an ok row.
func TestRefusedFramesHaveTheirRow(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "frames", Version: "0"}, nil)
	var kept rows
	emit := audit.EmitterFunc(kept.emit)
	h := audit.HTTP(emit)(httpmw.CheckFrames(mcpsdk.NewFrameGuard())(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	frames := hostileframes.Envelopes()
	for name, f := range hostileframes.Params("tools/call", reflect.TypeFor[mcp.CallToolParams]()) {
		frames["params "+name] = f
	}
	frames["a ping it reads"] = hostileframes.Request("9", "ping", "")
	statuses := map[int]int{}
	for _, name := range hostileframes.Sorted(frames) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, strings.NewReader(frames[name]))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, name)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		rs := kept.take()
		require.Len(t, rs, 1, "%s: one HTTP row", name)
		r := rs[0]
		refused := guardAnswered(string(body))
		if name == "a ping it reads" {
			assert.Equal(t, audit.OutcomeOK, r.Outcome, "%s: %s", name, body)
			continue
		}
		statuses[resp.StatusCode]++
		if !refused && resp.StatusCode != http.StatusAccepted {
			continue // the SDK read it (a frame it decodes), answering as it does
		}
		assert.Equal(t, audit.OutcomeRejected, r.Outcome, "%s (status %d, %s): the row says it was refused", name, resp.StatusCode, body)
		assert.Equal(t, errs.CodeInvalidRequest, r.Code, name)
		assert.Equal(t, httpmw.MsgFrameRefused, r.Message, name)
		for _, m := range hostileframes.GoInternals() {
			assert.NotContains(t, r.Message, m)
		}
	}
	assert.NotZero(t, statuses[http.StatusOK], "some refusals were answered 200 (a JSON-RPC error with the request's id): %v", statuses)
	assert.NotZero(t, statuses[http.StatusBadRequest], "and some 400: %v", statuses)
}

// guardAnswered reports whether body holds one of the frame guard's
// fixed messages.
func guardAnswered(body string) bool {
	for _, m := range []string{adapter.MsgFrameParse, adapter.MsgFrameEnvelope, adapter.MsgFrameParams} {
		if strings.Contains(body, m) {
			return true
		}
	}
	return false
}
