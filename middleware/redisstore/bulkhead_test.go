package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// TestBulkheadAcrossReplicas: three Bulkheads of limit 2 on one Store
// (three replicas) never run more than 2 calls at once between them; calls
// that wait get the slots as they are given back, on every path that gives
// one back: a return, a panic, a cancelled context.
func TestBulkheadAcrossReplicas(t *testing.T) {
	s := testStore(t)
	const limit = 2
	var inFlight, peak, ran atomic.Int32
	work := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		ran.Add(1)
		time.Sleep(2 * time.Millisecond) // hold the slot while others ask
		switch string(req.Arguments.JSON()) {
		case "panic":
			panic("a tool's bug")
		case "cancel":
			return toolctx.ErrorResult(ctx.Err())
		}
		return toolctx.TextResult("ok")
	})
	var replicas []toolctx.Handler
	for range 3 {
		replicas = append(replicas, middleware.Recover(middleware.Bulkhead(middleware.BulkheadConfig{
			Limit: limit, MaxWait: time.Minute, Key: middleware.ToolKey, Store: s,
			StorePolicy: middleware.StorePolicy{Name: "fleet", Timeout: time.Second},
		})(work)))
	}
	var wg sync.WaitGroup
	kinds := []string{"", "panic", "cancel"}
	for g := 0; g < 12; g++ {
		wg.Go(func() {
			for i := 0; i < 5; i++ {
				req := request("alice")
				req.Arguments = toolctx.RawArguments([]byte(kinds[(g+i)%3]))
				res := replicas[g%3].CallTool(context.Background(), req)
				if kinds[(g+i)%3] == "" {
					assert.False(t, res.Failed(), "a call that waits gets a slot in the end")
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(60), ran.Load(), "every call ran")
	assert.LessOrEqual(t, peak.Load(), int32(limit), "never more than the limit in flight across the replicas")
	assert.Equal(t, int32(limit), peak.Load(), "the limit was reached")
	n, err := s.rdb.ZCard(context.Background(), s.prefix+"sem:fleet\x00search").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "every slot was given back")
}

// TestBulkheadRejectsWhenFull: with every slot of the fleet taken, a call
// that may not wait is rejected at once with the public rejection.
func TestBulkheadRejectsWhenFull(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	held, err := s.Acquire(ctx, "full\x00", middleware.Semaphore{Limit: 1, TTL: time.Minute})
	require.NoError(t, err)
	require.NotNil(t, held)
	h := okHandler(middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Store: s,
		StorePolicy: middleware.StorePolicy{Name: "full", Timeout: time.Second}}))
	res := normalized(h.CallTool(ctx, request("alice")))
	require.True(t, res.Failed())
	assert.Equal(t, "unavailable", string(res.Error.Code))
	assert.Contains(t, res.Error.Message, "too many calls in flight")
	require.NoError(t, held.Release(ctx))
	assert.False(t, h.CallTool(ctx, request("alice")).Failed(), "the slot is free again")
}

// TestLeaseExpires: a slot whose holder neither renews nor releases it
// (its replica died) is free again after its TTL; renewing keeps it, and an
// expired lease cannot be renewed.
func TestLeaseExpires(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	sem := middleware.Semaphore{Limit: 1, TTL: 200 * time.Millisecond}
	dead, err := s.Acquire(ctx, "ttl", sem)
	require.NoError(t, err)
	require.NotNil(t, dead)
	other, err := s.Acquire(ctx, "ttl", sem)
	require.NoError(t, err)
	require.Nil(t, other, "the one slot is taken")

	require.NoError(t, dead.Renew(ctx), "a live lease renews")
	var got middleware.SemaphoreLease
	deadline := time.Now().Add(30 * time.Second)
	for got == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		got, err = s.Acquire(ctx, "ttl", sem)
		require.NoError(t, err)
	}
	require.NotNil(t, got, "the dead holder's slot expired")
	assert.ErrorIs(t, dead.Renew(ctx), ErrLeaseExpired, "an expired lease does not come back")
	require.NoError(t, dead.Release(ctx), "releasing an expired lease is not an error")
	require.NoError(t, got.Release(ctx))
	require.NoError(t, got.Release(ctx), "nor is releasing twice")
}
