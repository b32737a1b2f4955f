// Package ctxend tells whether a call's context has ended, reading the
// deadline itself rather than trusting ctx.Err() alone.
//
// ctx.Err() becomes DeadlineExceeded when the context's timer fires, and on
// a loaded machine the timer goroutine can run tens of milliseconds after
// the deadline: a decision taken from ctx.Err() alone ("did the call run
// past its deadline?") is then wrong for a result returned in that window.
// The clock is not late.
package ctxend

import (
	"context"
	"time"
)

// Err returns ctx.Err(), or context.DeadlineExceeded when ctx has a
// deadline that has passed although its timer has not fired yet, or nil
// while the context is live.
func Err(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
