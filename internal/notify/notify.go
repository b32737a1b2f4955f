// Package notify holds what both adapters' toolctx.Notifier do alike: the
// per-call rules of the notifications a handler sends (checked options, a
// progress that increases, nothing after the call's context ended or the
// call returned), around the SDK's own send.
package notify

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolmw/toolmw/toolctx"
)

// Gate orders the notifications of one call. Its zero value is ready; it
// must not be copied once used.
type Gate struct {
	mu    sync.Mutex // held across a send: notifications leave in order, and none after End
	last  float64    // the last progress reported
	any   bool       // whether one was
	ended bool
}

// Progress checks opts against the call's previous report and, when they
// pass, records them and calls send (nil: the client gave no progress
// token, so nothing is sent). It returns ctx's error when ctx has ended and
// toolctx.ErrCallEnded once End was called, without sending.
func (g *Gate) Progress(ctx context.Context, opts toolctx.ProgressOptions, send func() error) error {
	if err := toolctx.CheckProgress(opts); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.live(ctx); err != nil {
		return err
	}
	if g.any && !(opts.Progress > g.last) {
		return fmt.Errorf("toolctx: ProgressOptions.Progress must increase with each report of a call: got %v after %v", opts.Progress, g.last)
	}
	g.last, g.any = opts.Progress, true
	if send == nil {
		return nil
	}
	return send()
}

// Log checks opts (an empty level is info) and calls send with them, under
// the same rules as Progress.
func (g *Gate) Log(ctx context.Context, opts toolctx.LogOptions, send func(toolctx.LogOptions) error) error {
	if opts.Level == "" {
		opts.Level = toolctx.LogInfo
	}
	if err := toolctx.CheckLog(opts); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.live(ctx); err != nil {
		return err
	}
	return send(opts)
}

func (g *Gate) live(ctx context.Context) error {
	if g.ended {
		return toolctx.ErrCallEnded
	}
	return ctx.Err()
}

// End marks the call returned: every later Progress and Log returns
// toolctx.ErrCallEnded. It waits for a send in progress.
func (g *Gate) End() {
	g.mu.Lock()
	g.ended = true
	g.mu.Unlock()
}
