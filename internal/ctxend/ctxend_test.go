package ctxend_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/internal/ctxend"
)

// lateTimer is a context whose deadline has passed while its timer has not
// fired yet: what a loaded machine shows for a while after a deadline.
type lateTimer struct {
	context.Context
	deadline time.Time
}

func (l lateTimer) Deadline() (time.Time, bool) { return l.deadline, true }

func TestErr(t *testing.T) {
	assert.NoError(t, ctxend.Err(context.Background()), "a live context without a deadline")
	live := lateTimer{context.Background(), time.Now().Add(time.Hour)}
	assert.NoError(t, ctxend.Err(live), "a live context before its deadline")
	late := lateTimer{context.Background(), time.Now().Add(-time.Millisecond)}
	assert.NoError(t, late.Err(), "the context itself does not know yet")
	assert.ErrorIs(t, ctxend.Err(late), context.DeadlineExceeded, "the deadline read from the clock")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, ctxend.Err(lateTimer{ctx, time.Now().Add(-time.Second)}), context.Canceled, "ctx.Err() first")
}
