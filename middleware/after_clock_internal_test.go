package middleware

import (
	"testing"
	"time"
)

// TestWallClockReadsNow: a wallClock reading lies between two time.Now()
// taken around it, by the monotonic clock and by the wall clock, whether
// it takes a new anchor (the first reading) or reads from one.
func TestWallClockReadsNow(t *testing.T) {
	var c wallClock
	for i := range 3 {
		before := time.Now()
		got := c.now()
		after := time.Now()
		if got.Before(before) || got.After(after) { // the monotonic readings
			t.Fatalf("reading %d: %v is not between %v and %v (monotonic)", i, got, before, after)
		}
		// The wall readings: the anchor's wall time plus monotonic time may
		// differ from the wall clock by what NTP slewed since the anchor.
		const slew = 10 * time.Millisecond
		w := got.Round(0)
		if w.Before(before.Round(0).Add(-slew)) || w.After(after.Round(0).Add(slew)) {
			t.Fatalf("reading %d: wall %v is not between %v and %v", i, w, before.Round(0), after.Round(0))
		}
	}
}

// TestWallClockTakesNewAnchor: an anchor a second old or more is replaced
// by a new time.Now(), so that a step of the system clock shows within a
// second; a younger one is kept.
func TestWallClockTakesNewAnchor(t *testing.T) {
	var c wallClock
	old := time.Now().Add(-2 * time.Second)
	c.anchor.Store(&old)
	before := time.Now()
	got := c.now()
	a := c.anchor.Load()
	if a == &old {
		t.Fatal("an anchor two seconds old was kept")
	}
	if a.Before(before) || !a.Equal(got) {
		t.Fatalf("the new anchor %v is not the reading %v taken after %v", a, got, before)
	}
	c.now()
	if b := c.anchor.Load(); b != a && b.Sub(*a) < time.Second {
		t.Fatalf("a new anchor was taken %v after the last one, under a second", b.Sub(*a))
	}
}
