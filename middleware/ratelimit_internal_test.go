package middleware

import (
	"testing"
	"time"
)

// TestRetryAfter: the hint is what a client should wait, never less than
// the wait, in whole seconds from one second on.
func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct{ wait, want time.Duration }{
		{0, time.Millisecond},
		{time.Nanosecond, time.Millisecond},
		{1500 * time.Microsecond, 2 * time.Millisecond},
		{999 * time.Millisecond, 999 * time.Millisecond},
		{time.Second, time.Second},
		{time.Second + time.Nanosecond, 2 * time.Second},
		{1500 * time.Millisecond, 2 * time.Second},
		{29998 * time.Millisecond, 30 * time.Second},
		{30 * time.Second, 30 * time.Second},
		{time.Hour - time.Millisecond, time.Hour},
	} {
		if got := retryAfter(tc.wait); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.wait, got, tc.want)
		}
	}
}
