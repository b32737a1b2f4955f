// Package redisstore keeps the state of toolmw's guards on Redis, so that
// a fleet of replicas shares it: [middleware.RateLimit]'s buckets,
// [middleware.Bulkhead]'s slots and [middleware.Cache]'s results. See
// docs/fleet.md for the algorithms, the keys and the clock.
//
// One [Store] implements all three store interfaces of package middleware:
//
//	st, err := redisstore.Open("redis://127.0.0.1:6379/0")
//	...
//	defer st.Close()
//	limit := middleware.RateLimit(middleware.RateLimitConfig{
//		Rate: rate.Every(time.Minute / 60), Burst: 10,
//		Store: st, StorePolicy: middleware.StorePolicy{Name: "calls"},
//	})
//
// Each guard call is one round trip, bounded by the StorePolicy's Timeout
// (the client must honour context deadlines, which [Open] configures and
// [New] checks). Keep Redis on a private network: whoever can write to it
// can lift every limit.
package redisstore
