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
	idle     chan chan job // goroutines waiting for a call
	wg       sync.WaitGroup
	logger   *slog.Logger
	reported atomic.Bool
}

func newRunner(logger *slog.Logger) *runner {
	return &runner{idle: make(chan chan job, 2), logger: logger}
}

type callResult struct {
	err    error
	goexit bool
}

// job is one call for a runner goroutine, and where its result goes.
type job struct {
	f   func() error
	res chan callResult
}

// call runs f on one of the runner's goroutines and returns its error,
// or the panic or Goexit it ended with, as an error.
func (r *runner) call(f func() error) error {
	var work chan job
	select {
	case work = <-r.idle:
	default:
		work = make(chan job)
		r.wg.Add(1)
		go r.loop(work)
	}
	res := make(chan callResult, 1)
	work <- job{f: f, res: res}
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
// ends the goroutine with a Goexit. It goes back to the idle list before
// it hands the result over, so that close, which runs once the calls have
// returned, finds every goroutine still running there.
func (r *runner) loop(work chan job) {
	defer r.wg.Done()
	for j := range work {
		if !r.run(work, j) {
			return
		}
	}
}

// run makes one call and reports whether the goroutine went back to the
// idle list.
func (r *runner) run(work chan job, j job) (idle bool) {
	returned := false
	defer func() {
		if !returned { // a Goexit: the goroutine ends after this
			j.res <- callResult{goexit: true}
		}
	}()
	err := safeCall(j.f)
	returned = true
	select {
	case r.idle <- work:
		idle = true
	default: // enough wait idle
	}
	j.res <- callResult{err: err}
	return idle
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
