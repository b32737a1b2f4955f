package audit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
)

// errSinkGoexit is the error of a sink call that called runtime.Goexit
// (what t.FailNow does in a test double).
var errSinkGoexit = errors.New("audit: the sink called runtime.Goexit")

// runner makes the [Async]'s calls into sinks (the sink, the fallback) on
// goroutines of its own, kept idle for the next call, so that a sink that
// calls runtime.Goexit, which nothing can stop, ends one of those and not
// the writer or the dispatcher: the call returns errSinkGoexit, reported
// once to the logger, and the next call starts a fresh goroutine. A panic
// is stopped there and returned as an error, as before. The hand-over
// costs a few microseconds per batch, not per row.
type runner struct {
	idle     chan chan func() // goroutines waiting for a call
	wg       sync.WaitGroup
	logger   *slog.Logger
	reported atomic.Bool
}

func newRunner(logger *slog.Logger) *runner {
	return &runner{idle: make(chan chan func(), 2), logger: logger}
}

type callResult struct {
	err    error
	goexit bool
}

// call runs f on one of the runner's goroutines and returns its error,
// or the panic or Goexit it ended with, as an error.
func (r *runner) call(f func() error) error {
	var work chan func()
	select {
	case work = <-r.idle:
	default:
		work = make(chan func())
		r.wg.Add(1)
		go r.loop(work)
	}
	res := make(chan callResult, 1)
	work <- func() {
		returned := false
		defer func() {
			if !returned { // a Goexit: this goroutine ends after this
				res <- callResult{goexit: true}
			}
		}()
		err := safeCall(f)
		returned = true
		res <- callResult{err: err}
	}
	out := <-res
	if out.goexit {
		if !r.reported.Swap(true) {
			r.logger.LogAttrs(context.Background(), slog.LevelError,
				"toolmw/audit: a sink called runtime.Goexit; the write counts as failed and the writer goes on (reported once)")
		}
		return errSinkGoexit
	}
	return out.err
}

// loop runs the calls handed to it until the runner is closed, or a call
// ends the goroutine with a Goexit.
func (r *runner) loop(work chan func()) {
	defer r.wg.Done()
	for f := range work {
		f()
		select {
		case r.idle <- work:
		default:
			return // enough wait idle
		}
	}
}

// close ends the idle goroutines once nothing calls any more.
func (r *runner) close() {
	for {
		select {
		case work := <-r.idle:
			close(work)
		default:
			r.wg.Wait()
			return
		}
	}
}
