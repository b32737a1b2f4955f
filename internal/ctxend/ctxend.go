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
