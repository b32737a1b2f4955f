package adapter

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolmw/toolmw/toolctx"
)

// notifier is a call's toolctx.Notifier: it applies the per-call rules of
// notifications (checked options, a progress that increases, nothing after
// the call's context ended or the call returned) around the adapter's
// Sender. It must not be copied once used.
type notifier struct {
	s     Sender
	mu    sync.Mutex // held across a send: notifications leave in order, and none after end
	last  float64    // the last progress reported
	any   bool       // whether one was
	ended bool
}

// Progress implements toolctx.Notifier.
func (n *notifier) Progress(ctx context.Context, opts toolctx.ProgressOptions) error {
	if err := toolctx.CheckProgress(opts); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.live(ctx); err != nil {
		return err
	}
	if n.any && !(opts.Progress > n.last) {
		return fmt.Errorf("toolctx: ProgressOptions.Progress must increase with each report of a call: got %v after %v", opts.Progress, n.last)
	}
	n.last, n.any = opts.Progress, true
	if n.s == nil {
		return nil
	}
	return n.s.SendProgress(opts)
}

// Log implements toolctx.Notifier: an empty level is info.
func (n *notifier) Log(ctx context.Context, opts toolctx.LogOptions) error {
	if opts.Level == "" {
		opts.Level = toolctx.LogInfo
	}
	if err := toolctx.CheckLog(opts); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.live(ctx); err != nil {
		return err
	}
	if n.s == nil {
		return nil
	}
	return n.s.SendLog(opts)
}

func (n *notifier) live(ctx context.Context) error {
	if n.ended {
		return toolctx.ErrCallEnded
	}
	return ctx.Err()
}

// end marks the call returned: every later Progress and Log returns
// toolctx.ErrCallEnded. It waits for a send in progress.
func (n *notifier) end() {
	n.mu.Lock()
	n.ended = true
	n.mu.Unlock()
}
