package serve

import (
	"context"
	"sync/atomic"

	"github.com/toolmw/toolmw/toolctx"
)

// InFlight tracks the tool calls in flight, and cancels them all when a
// shutdown's grace period is over: its last word to calls that outlived it.
// A cancelled call ends as such, and its audit row says so. Create one with
// NewInFlight.
type InFlight struct {
	n      atomic.Int64 // calls running now
	stop   context.Context
	cancel context.CancelFunc
}

// NewInFlight returns a tracker with no call in flight.
func NewInFlight() *InFlight {
	c := &InFlight{}
	c.stop, c.cancel = context.WithCancel(context.Background())
	return c
}

// Track is the interceptor that counts each call and cancels its context
// when Cancel is called. It goes first in the chain.
func (c *InFlight) Track(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		c.n.Add(1)
		defer c.n.Add(-1)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		unregister := context.AfterFunc(c.stop, cancel)
		defer unregister()
		return next.CallTool(ctx, req)
	})
}

// Running is how many tracked calls are in flight now.
func (c *InFlight) Running() int64 { return c.n.Load() }

// Cancel cancels the context of every tracked call, those in flight and
// those still to come.
func (c *InFlight) Cancel() { c.cancel() }
