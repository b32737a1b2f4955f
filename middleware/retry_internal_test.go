package middleware

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The backoff doubles from InitialBackoff, is capped at MaxBackoff, and is
// drawn between half of it and all of it.
func TestRetryBackoff(t *testing.T) {
	r := newRetrier(RetryConfig{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, MaxAttempts: 100})
	for _, draw := range []struct {
		name string
		fn   func(int64) int64
	}{{"lowest", func(int64) int64 { return 0 }}, {"highest", func(n int64) int64 { return n - 1 }}} {
		r.jitter = draw.fn
		for n, want := range []time.Duration{10, 20, 40, 50, 50} {
			d := r.backoff(n+1) * 1
			full := want * time.Millisecond
			assert.GreaterOrEqual(t, d, full/2, "%s: attempt %d's wait is at least half", draw.name, n+1)
			assert.LessOrEqual(t, d, full, "%s: attempt %d's wait is at most the capped exponential", draw.name, n+1)
		}
		assert.LessOrEqual(t, r.backoff(80), 50*time.Millisecond, "%s: no overflow far out", draw.name)
	}
}
