package redisstore

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/middleware"
)

// TestTakeMatchesXTimeRate: the script decides as golang.org/x/time/rate's
// Limiter.Allow does (the reference the in-process limiter is checked
// against, call by call, in middleware's TestRateBucketMatchesXTimeRate),
// on the same random calls and pauses, with the clock read given to the
// script; a rejection's wait is the reference's, and the call after it is
// admitted.
func TestTakeMatchesXTimeRate(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(17, 18))
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for n, c := range []struct {
		every time.Duration
		burst int
	}{
		{time.Millisecond, 1}, {7 * time.Millisecond, 3}, {time.Second / 30, 10}, {time.Second, 5}, {time.Minute, 2},
	} {
		key := "match" + strconv.Itoa(n)
		shape := middleware.RateBucket{Interval: c.every, Burst: c.burst}
		ref := rate.NewLimiter(rate.Every(c.every), c.burst)
		now := int64(0) // microseconds since start
		admitted, rejected := 0, 0
		afterWait := false
		for i := 0; i < 2000; i++ {
			every := int64(c.every / time.Microsecond)
			switch {
			case afterWait:
			case rng.IntN(10) == 0:
				now += rng.Int64N(every * int64(c.burst+2))
			default:
				now += rng.Int64N(every / 2)
			}
			at := start.Add(time.Duration(now) * time.Microsecond)
			wantOK := ref.AllowN(at, 1)
			wait, ok, err := s.take(ctx, key, shape, strconv.FormatInt(start.UnixMicro()-rateEpoch*1e6+now, 10))
			require.NoError(t, err)
			require.Equal(t, wantOK, ok, "every %v burst %d, call %d at %v: the same decision as x/time/rate", c.every, c.burst, i, time.Duration(now)*time.Microsecond)
			if afterWait {
				require.True(t, ok, "every %v burst %d, call %d: a token once the wait is over", c.every, c.burst, i)
				afterWait = false
			}
			if ok {
				admitted++
				continue
			}
			rejected++
			refWait := time.Duration((1 - ref.TokensAt(at)) * float64(c.every))
			require.InDelta(t, float64(refWait), float64(wait), float64(time.Microsecond),
				"every %v burst %d, call %d: the wait until the next token", c.every, c.burst, i)
			now += int64((wait+time.Microsecond-1)/time.Microsecond) + 1
			afterWait = true
		}
		require.Positive(t, admitted, "every %v: some admitted", c.every)
		require.Positive(t, rejected, "every %v: some rejected", c.every)
	}
}

// TestTakeKeyExpiresWhenFull: a bucket's key lives exactly as long as the
// bucket is not full, so idle callers leave nothing in Redis.
func TestTakeKeyExpiresWhenFull(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	shape := middleware.RateBucket{Interval: time.Minute, Burst: 3}
	_, ok, err := s.TakeToken(ctx, "idle", shape)
	require.NoError(t, err)
	require.True(t, ok)
	ttl, err := s.rdb.PTTL(ctx, s.prefix+"rl:idle").Result()
	require.NoError(t, err)
	require.InDelta(t, float64(time.Minute), float64(ttl), float64(5*time.Second), "the key expires when the token is back")
}

// TestRateLimitAcrossReplicas: three RateLimits on one Store (three
// replicas) admit a caller's burst once between them, not three times; a
// rejection carries the wait, and other callers have their own buckets.
func TestRateLimitAcrossReplicas(t *testing.T) {
	s := testStore(t)
	const burst = 5
	var replicas []toolctxHandler
	for range 3 {
		replicas = append(replicas, okHandler(middleware.RateLimit(middleware.RateLimitConfig{
			Rate: rate.Every(time.Hour), Burst: burst, Store: s,
			StorePolicy: middleware.StorePolicy{Name: "fleet", Timeout: time.Second},
		})))
	}
	for _, caller := range []string{"alice", "bob"} {
		admitted := 0
		for i := 0; i < 30; i++ {
			res := replicas[i%3].CallTool(context.Background(), request(caller))
			if !res.Failed() {
				admitted++
				continue
			}
			require.Equal(t, "rate_limited", string(normalized(res).Error.Code))
			require.Empty(t, res.Notes(), "the store answered: no note")
		}
		require.Equal(t, burst, admitted, "%s: the burst, once across the three replicas", caller)
	}
}
