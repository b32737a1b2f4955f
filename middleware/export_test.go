package middleware

import (
	"sync"
	"time"

	"github.com/toolmw/toolmw/toolctx"
)

// TimeoutWithClock is Timeout reading the given clock.
var TimeoutWithClock = timeout

// RoundsWithClock is Rounds reading the given clock.
var RoundsWithClock = roundsWithClock

// FakeClock is a clock tests advance by hand: Advance runs the timers that
// fall due, synchronously, in the caller's goroutine.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c      *FakeClock
	at     time.Time
	f      func()
	active bool
}

// NewFakeClock returns a FakeClock at an arbitrary fixed time.
func NewFakeClock() *FakeClock {
	return &FakeClock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *FakeClock) AfterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f, active: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.at, t.active = t.c.now.Add(d), true
	return was
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

// Advance moves the clock by d and runs every timer that falls due.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due *fakeTimer
		for _, t := range c.timers {
			if t.active && !t.at.After(c.now) {
				due = t
				break
			}
		}
		if due != nil {
			due.active = false
		}
		c.mu.Unlock()
		if due == nil {
			return
		}
		due.f()
	}
}

// ProgressTimeoutWithClock is ProgressTimeout reading c.
func ProgressTimeoutWithClock(cfg ProgressTimeoutConfig, c *FakeClock) toolctx.Middleware {
	return progressTimeout(cfg, c)
}
