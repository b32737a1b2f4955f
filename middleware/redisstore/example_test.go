package redisstore_test

import (
	"log"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/redisstore"
)

// The guards of every replica of a fleet on one Redis: a rate limit per
// caller, a bulkhead on the export tool and a cache of the weather tool,
// each holding across the fleet. Redis down or slower than 5ms, each guard
// decides alone for that call (fail open) and the row notes store=fallback.
func Example() {
	st, err := redisstore.Open("redis://127.0.0.1:6379/0")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	chain := middleware.New(
		middleware.RateLimit(middleware.RateLimitConfig{
			Rate: rate.Every(time.Second), Burst: 60,
			Store: st, StorePolicy: middleware.StorePolicy{Name: "calls"},
		}),
		middleware.When(middleware.Tools("export"), middleware.Bulkhead(middleware.BulkheadConfig{
			Limit: 4, MaxWait: time.Second,
			// Failing closed: the export backend cannot take 4 per replica.
			Store: st, StorePolicy: middleware.StorePolicy{Name: "export", FailClosed: true},
		})),
		middleware.When(middleware.Tools("weather"), middleware.Cache(middleware.CacheConfig{
			TTL:   time.Minute,
			Store: st, StorePolicy: middleware.StorePolicy{Name: "weather"},
		})),
	)
	_ = chain // chain.Then(handler), or an adapter's Install
}
