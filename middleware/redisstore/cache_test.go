package redisstore

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestCacheAcrossReplicas: a result one replica made is served by another,
// with every content kind, structured content and _meta intact; to the
// same caller only; never a failure, an input-required result or a later
// round; never a result over MaxItemBytes; and the store holds no
// argument or subject in its keys.
func TestCacheAcrossReplicas(t *testing.T) {
	s := testStore(t)
	var runs atomic.Int32
	size := 1.5
	tool := toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		n := runs.Add(1)
		switch string(req.Arguments.JSON()) {
		case `{"kind":"fail"}`:
			return toolctx.ErrorResult(context.DeadlineExceeded)
		case `{"kind":"ask"}`:
			return toolctx.InputRequiredResult("s1", nil)
		case `{"kind":"big"}`:
			return toolctx.TextResult(strings.Repeat("x", 2000))
		}
		return &toolctx.CallResult{
			Content: []toolctx.Content{
				&toolctx.Text{Text: "run " + strconv.Itoa(int(n)), Annotations: &toolctx.Annotations{Priority: &size}},
				&toolctx.Image{Data: []byte{0, 1, 2}, MIMEType: "image/png"},
				&toolctx.ResourceLink{URI: "file:///a", Name: "a"},
				&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///b", Text: "b"}},
			},
			StructuredContent: map[string]any{"n": n},
			Meta:              map[string]any{"big": 12345678901234567},
		}
	})
	var replicas []toolctx.Handler
	for range 2 {
		replicas = append(replicas, middleware.Cache(middleware.CacheConfig{TTL: time.Minute, MaxItemBytes: 1000, Store: s,
			StorePolicy: middleware.StorePolicy{Name: "fleet", Timeout: time.Second}})(tool))
	}
	ctx := context.Background()
	call := func(replica int, subject, args string) *toolctx.CallResult {
		req := request(subject)
		req.Arguments = toolctx.RawArguments([]byte(args))
		return replicas[replica].CallTool(ctx, req)
	}
	first := call(0, "alice", `{"q":"x"}`)
	again := call(1, "alice", `{ "q": "x" }`)
	note, _ := first.Note(middleware.NoteCache)
	assert.Equal(t, "miss", note)
	note, _ = again.Note(middleware.NoteCache)
	assert.Equal(t, "hit", note, "the other replica answers from the store")
	assert.Equal(t, int32(1), runs.Load())
	assert.Equal(t, first.Content, again.Content, "every content kind comes back as it was")
	assert.JSONEq(t, `{"n":1}`, string(again.StructuredContent.(jsonRaw)))
	assert.Equal(t, "12345678901234567", again.Meta["big"].(jsonNumber).String(), "a large number in _meta is exact")

	call(1, "bob", `{"q":"x"}`)
	assert.Equal(t, int32(2), runs.Load(), "another caller never reads alice's result")
	for _, args := range []string{`{"kind":"fail"}`, `{"kind":"ask"}`, `{"kind":"big"}`} {
		call(0, "alice", args)
		res := call(1, "alice", args)
		note, _ := res.Note(middleware.NoteCache)
		assert.Equal(t, "miss", note, "%s is never stored", args)
	}
	assert.Equal(t, int32(8), runs.Load())
	later := request("alice")
	later.Arguments = toolctx.RawArguments([]byte(`{"q":"x"}`))
	later.RequestState = "s1"
	replicas[1].CallTool(ctx, later)
	assert.Equal(t, int32(9), runs.Load(), "a later round of a multi-round-trip call is never answered from the store")

	keys, err := s.rdb.Keys(ctx, s.prefix+"*").Result()
	require.NoError(t, err)
	assert.Len(t, keys, 2, "alice's and bob's results")
	for _, k := range keys {
		assert.NotContains(t, k, "alice")
		assert.NotContains(t, k, `"q"`)
		ttl, err := s.rdb.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.InDelta(t, float64(time.Minute), float64(ttl), float64(10*time.Second), "kept for the TTL")
	}
}
