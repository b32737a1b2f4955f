package middleware_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// counting returns a handler whose result names how many times it ran
// and what it was asked.
func counting(calls *atomic.Int32) toolctx.Handler {
	return toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		n := calls.Add(1)
		return toolctx.TextResult("run " + strconv.Itoa(int(n)) + " " + string(req.Arguments.JSON()))
	})
}

// Cache through both adapters: the second identical call is answered from
// the cache (the row says so), a different subject or different arguments
// run the handler, and a failure is never cached.
func TestCacheThroughAdapters(t *testing.T) {
	var calls, fails atomic.Int32
	tools := map[string]toolctx.Handler{
		"weather": counting(&calls),
		"broken": toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			fails.Add(1)
			return toolctx.ErrorResult(errs.Unavailable("down"))
		}),
	}
	forEachSDKNew(t, tools, func() []toolctx.Middleware {
		return []toolctx.Middleware{middleware.Cache(middleware.CacheConfig{TTL: time.Hour})}
	}, func(t *testing.T, call caller, side *serverSide) {
		calls.Store(0)
		fails.Store(0)
		ctx := context.Background()
		first := call(t, ctx, callOpts{Tool: "weather", Args: map[string]any{"city": "Oslo", "days": 3}, Subject: "alice"})
		again := call(t, ctx, callOpts{Tool: "weather", Args: map[string]any{"days": 3, "city": "Oslo"}, Subject: "alice"})
		assert.Equal(t, first.Text, again.Text, "the same answer from the cache")
		assert.Equal(t, int32(1), calls.Load(), "the handler ran once")

		bob := call(t, ctx, callOpts{Tool: "weather", Args: map[string]any{"city": "Oslo", "days": 3}, Subject: "bob"})
		assert.NotEqual(t, first.Text, bob.Text, "another subject is never served alice's entry")
		call(t, ctx, callOpts{Tool: "weather", Args: map[string]any{"city": "Rome", "days": 3}, Subject: "alice"})
		assert.Equal(t, int32(3), calls.Load(), "other arguments or subjects run the handler")

		for i := 0; i < 2; i++ {
			assert.True(t, call(t, ctx, callOpts{Tool: "broken", Subject: "alice"}).IsError, "a failure")
		}
		assert.Equal(t, int32(2), fails.Load(), "failures are never cached")

		rows, diags := side.take()
		require.Len(t, rows, 6, "one row per call")
		assert.Equal(t, []toolctx.Note{{Key: middleware.NoteCache, Value: "miss"}}, rows[0].Notes, "the miss's row says so")
		assert.Equal(t, []toolctx.Note{{Key: middleware.NoteCache, Value: "hit"}}, rows[1].Notes, "the hit's row says so")
		assert.Empty(t, diags, "no diagnostics")
	})
}

func TestCacheTTLBoundAndSharing(t *testing.T) {
	var calls atomic.Int32
	h := thenG(t, middleware.New(middleware.Cache(middleware.CacheConfig{TTL: time.Hour, MaxEntries: 2})), counting(&calls))
	call := func(args string, sub string) *toolctx.CallResult {
		req := reqG("t")
		req.Arguments = toolctx.RawArguments(json.RawMessage(args))
		if sub != "" {
			req.Identity = &toolctx.Identity{Subject: sub}
		}
		return h.CallTool(context.Background(), req)
	}
	call(`{"a":1}`, "s")
	call(`{"a":2}`, "s")
	call(`{"a":3}`, "s") // evicts {"a":1}, the least recently used
	calls.Store(0)
	call(`{"a":3}`, "s")
	assert.Equal(t, int32(0), calls.Load(), "a recent entry is kept")
	call(`{"a":1}`, "s")
	assert.Equal(t, int32(1), calls.Load(), "the least recently used went first: MaxEntries bounds the cache")
	call(`{"a": 1.0}`, "s")
	assert.Equal(t, int32(2), calls.Load(), "1.0 is not 1: numbers are kept as written")
	call(`not json`, "s")
	call(`not json`, "s")
	assert.Equal(t, int32(4), calls.Load(), "arguments that are not JSON are never cached")

	shared := thenG(t, middleware.New(middleware.Cache(middleware.CacheConfig{TTL: time.Hour, ShareAcrossSubjects: true})), counting(&calls))
	calls.Store(0)
	for _, sub := range []string{"alice", "bob"} {
		req := reqG("t")
		req.Identity = &toolctx.Identity{Subject: sub}
		shared.CallTool(context.Background(), req)
	}
	assert.Equal(t, int32(1), calls.Load(), "ShareAcrossSubjects shares one entry")

	short := thenG(t, middleware.New(middleware.Cache(middleware.CacheConfig{TTL: time.Nanosecond})), counting(&calls))
	calls.Store(0)
	short.CallTool(context.Background(), reqG("t"))
	time.Sleep(time.Millisecond) // past a 1ns TTL whatever the load
	short.CallTool(context.Background(), reqG("t"))
	assert.Equal(t, int32(2), calls.Load(), "an expired entry is not served")

	anon := thenG(t, middleware.New(middleware.Cache(middleware.CacheConfig{TTL: time.Hour})), counting(&calls))
	calls.Store(0)
	for _, sess := range []string{"s1", "s2"} {
		req := reqG("t")
		req.SessionID = sess
		anon.CallTool(context.Background(), req)
	}
	assert.Equal(t, int32(2), calls.Load(), "without an identity, sessions do not share entries")

	assert.Panics(t, func() { middleware.Cache(middleware.CacheConfig{}) }, "no TTL")
	assert.Panics(t, func() { middleware.Cache(middleware.CacheConfig{TTL: time.Second, MaxEntries: -1}) }, "negative MaxEntries")
}

// TestCacheMaxItemBytes: a result larger than MaxItemBytes (content and
// structured content as they go on the wire) is answered, noted as a miss
// and never kept; one at the bound is kept.
func TestCacheMaxItemBytes(t *testing.T) {
	var calls atomic.Int32
	h := thenG(t, middleware.New(middleware.Cache(middleware.CacheConfig{TTL: time.Hour, MaxItemBytes: 12})),
		toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
			calls.Add(1)
			if string(req.Arguments.JSON()) == `"big"` {
				return toolctx.StructuredResult("0123456789") // 12 bytes of text and 12 of structured content
			}
			return toolctx.TextResult("0123456789") // 12 bytes with its quotes
		}))
	for _, args := range []string{`"small"`, `"big"`} {
		req := reqG("t")
		req.Arguments = toolctx.RawArguments(json.RawMessage(args))
		first := h.CallTool(context.Background(), req)
		second := h.CallTool(context.Background(), req)
		assert.False(t, first.Failed())
		note, _ := first.Note(middleware.NoteCache)
		assert.Equal(t, "miss", note)
		note, _ = second.Note(middleware.NoteCache)
		if args == `"small"` {
			assert.Equal(t, "hit", note, "a result at the bound is kept")
		} else {
			assert.Equal(t, "miss", note, "a result over the bound is never kept")
		}
	}
	assert.Equal(t, int32(3), calls.Load())
}
