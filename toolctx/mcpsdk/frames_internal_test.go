package mcpsdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/internal/hostileframes"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// guardMethods are the methods go-sdk v1.8.0's server decodes params for
// (serverMethodInfos, mcp/server.go); the codec must check each.
var guardMethods = []string{
	"completion/complete", "server/discover", "initialize", "ping", "prompts/list", "prompts/get", "tools/list",
	"tools/call", "resources/list", "resources/templates/list", "resources/read", "logging/setLevel",
	"resources/subscribe", "subscriptions/listen", "resources/unsubscribe", "notifications/cancelled",
	"notifications/initialized", "notifications/roots/list_changed", "notifications/progress",
}

func TestFrameCodecMethods(t *testing.T) {
	var got []string
	for m := range frameCodec.Params {
		got = append(got, m)
	}
	slices.Sort(got)
	want := slices.Clone(guardMethods)
	slices.Sort(want)
	assert.Equal(t, want, got)
}

// sdkDecodes is what go-sdk does with a message, by its own codec: the
// envelope with jsonrpc.DecodeMessage, the params with the decoder it uses.
func sdkDecodes(frame string) bool {
	msg, err := jsonrpc.DecodeMessage([]byte(frame))
	if err != nil {
		return false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return true
	}
	check := frameCodec.Params[req.Method]
	return check == nil || check(adapter.Envelope{Params: req.Params}) == nil
}

// The guard passes exactly the tools/call frames go-sdk decodes, and the
// shape clients send without allocating (the kit's fast path, which says
// yes only to frames it has read whole).
func TestFrameGuardAgreesWithSDK(t *testing.T) {
	g := newFrameGuard(&adapter.Config{Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	for range 5000 {
		f := fmt.Sprintf(`{"jsonrpc":%s,"id":%s,"method":"tools/call","params":{"name":%s,"arguments":%s,"_meta":%s%s}}`,
			pick(`"2.0"`, `"2.0"`, `"1.0"`, `2`),
			pick(`1`, `"a"`, `null`, `1.5`, `-0`, `1e999999`, `{}`, `[]`, `true`, `"\u00e9"`),
			pick(`"echo"`, `null`, `5`, `[]`, `"\u0000"`),
			hostileframes.RandomJSON(r, 3),
			pick(`null`, `{}`, `"x"`, `{"progressToken":1e400}`, `{"a":[1,2,{"b":-1e-400}]}`, `{"k":1e308}`),
			pick(``, `,"Name":5`, `,"x":1e999999`, `,"requestState":5`, `,"inputResponses":{}`, `,"n\u0061me":5`, `,"_meta":5`))
		_, pass := g.CheckFrame(ctx, []byte(f))
		assert.Equal(t, sdkDecodes(f), pass, "frame %s", f)
	}
	typical := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello","n":3,"ok":true,"list":[1.5,null]},"_meta":{"progressToken":"p1"}}}`)
	_, pass := g.CheckFrame(ctx, typical)
	assert.True(t, pass, "the shape clients send passes")
	params := []byte(`{"name":"echo","arguments":{"q":"hello"}}`)
	assert.Nil(t, g.CheckParams(ctx, "tools/call", params, false))
	if !raceEnabled {
		assert.Zero(t, testing.AllocsPerRun(1000, func() { g.CheckFrame(ctx, typical) }), "and is read without allocating")
		assert.Zero(t, testing.AllocsPerRun(1000, func() { g.CheckParams(ctx, "tools/call", params, false) }), "in memory too")
	}
}

// BenchmarkFrameGuard is what the guard costs a tools/call of the common
// shape: the whole frame (stdio, HTTP) and the params alone (in memory)
// (go test ./toolctx/mcpsdk -run '^$' -bench FrameGuard).
func BenchmarkFrameGuard(b *testing.B) {
	g := newFrameGuard(&adapter.Config{Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	frame := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello","n":3},"_meta":{"progressToken":"p1"}}}`)
	params := []byte(`{"name":"echo","arguments":{"text":"hello","n":3},"_meta":{"progressToken":"p1"}}`)
	b.Run("frame", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			g.CheckFrame(ctx, frame)
		}
	})
	b.Run("params", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			g.CheckParams(ctx, "tools/call", params, false)
		}
	})
}

// The net under the guard on a connection: an error carrying go-sdk's
// decoder text, which the guard did not foresee, leaves with the fixed
// message and the SDK's code; anything else leaves as it is. (The stream's
// net is the kit's: TestStreamScrubsDecoderText.)
func TestNetScrubsDecoderText(t *testing.T) {
	resp := &jsonrpc.Response{ID: jsonrpc.ID{}, Error: fmt.Errorf("%w: unmarshaling %q into a *mcp.X: %w", &jsonrpc.Error{Code: -32602, Message: "invalid params"}, "5", errors.New("json: cannot unmarshal"))}
	out := scrubResponse(resp).(*jsonrpc.Response)
	assert.Equal(t, &jsonrpc.Error{Code: -32602, Message: adapter.MsgFrameParams}, out.Error)
	ok := &jsonrpc.Response{Error: &jsonrpc.Error{Code: -32601, Message: "method not found"}}
	assert.Same(t, ok, scrubResponse(ok))
}
