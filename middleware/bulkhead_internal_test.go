package middleware

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
)

// A waiting call takes the slot the moment it is freed, and a key with a
// call waiting is never dropped.
func TestBulkheadWaiterGetsTheSlot(t *testing.T) {
	b := newBulkhead(BulkheadConfig{Limit: 1, MaxWait: time.Minute, Key: CallerKey, MaxKeys: 1})
	release := make(chan struct{})
	entered := make(chan string, 2)
	h := b.middleware(toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		entered <- req.Identity.Subject + "/" + req.Tool
		<-release
		return toolctx.TextResult("ok")
	}))
	alice := func(tool string) *toolctx.Request {
		return &toolctx.Request{Tool: tool, Identity: &toolctx.Identity{Subject: "alice"}}
	}
	done := make(chan *toolctx.CallResult, 2)
	go func() { done <- h.CallTool(context.Background(), alice("first")) }()
	require.Equal(t, "alice/first", <-entered, "the first call runs")
	go func() { done <- h.CallTool(context.Background(), alice("second")) }()
	waiting := func() int {
		e, mu := b.keys.lock("alice", 0)
		defer mu.Unlock()
		return e.v.waiting
	}
	for waiting() == 0 { // synchronise on the waiter, not on time
		time.Sleep(time.Millisecond)
	}
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "t", Identity: &toolctx.Identity{Subject: "bob"}})
	assert.True(t, res.IsError, "MaxKeys 1 and alice busy: a new key is rejected, alice's slots are kept")
	release <- struct{}{}
	assert.Equal(t, "alice/second", <-entered, "the waiter takes the freed slot")
	release <- struct{}{}
	assert.False(t, (<-done).IsError, "both finish")
	assert.False(t, (<-done).IsError, "both finish")
}

// 100,000 invented keys do not grow the bulkhead past MaxKeys.
func TestBulkheadAdversarialKeys(t *testing.T) {
	b := newBulkhead(BulkheadConfig{Limit: 2, Key: CallerKey, MaxKeys: 500})
	h := b.middleware(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") }))
	for i := 0; i < 100_000; i++ {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: "t", SessionID: "s" + strconv.Itoa(i)})
		require.False(t, res.IsError, "idle keys make room for new ones")
	}
	assert.LessOrEqual(t, b.keys.len(), 500+tableShards, "bounded by MaxKeys")
}
