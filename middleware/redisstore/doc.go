// Package redisstore keeps the state of toolmw's guards on Redis, so that a
// fleet of replicas shares it: [middleware.RateLimit]'s buckets,
// [middleware.Bulkhead]'s slots and [middleware.Cache]'s results. One
// [Store] implements all three store interfaces of package middleware:
//
//	st, err := redisstore.Open("redis://127.0.0.1:6379/0")
//	...
//	defer st.Close()
//	limit := middleware.RateLimit(middleware.RateLimitConfig{
//		Rate: rate.Every(time.Minute / 60), Burst: 10,
//		Store: st, StorePolicy: middleware.StorePolicy{Name: "calls"},
//	})
//
// Each guard call is one round trip: the rate limit and the bulkhead's
// acquire are Lua scripts (EVALSHA, loaded once), atomic on the server; the
// cache is a GET and a SET with an expiry. Times come from the Redis
// server's clock (TIME), so the replicas' clocks need not agree.
//
// The rate limiter is the generic cell rate algorithm (GCRA), the algorithm
// of the in-process limiter: a bucket is one number, its theoretical arrival
// time, rather than a token bucket's two (the tokens and when they were
// counted); the decision is the same call for call (a test checks it
// against golang.org/x/time/rate as the in-process one is checked), and the
// key expires exactly when the bucket is full again, so an idle caller
// costs Redis nothing. Times are microseconds since 2026 on the server's
// clock, which Lua's doubles hold to within nanoseconds for decades.
//
// A bulkhead key is a sorted set of leases scored by their expiry: an
// acquire first drops the expired ones (a replica that died mid-call holds
// its slot for one lease TTL at most), then adds one if there is room.
//
// Keys are the prefix ("toolmw:" by default, [WithPrefix]), a kind ("rl:",
// "sem:", "cache:") and the guard's key (its StorePolicy Name and the
// caller's key: a subject, a session id, a tool name; the cache's is a
// hash). Keep Redis on a private network: whoever can write to it can lift
// every limit.
//
// Every call is bounded by the context the guard passes (the StorePolicy's
// Timeout): the client must honour context deadlines on its socket reads,
// which [Open] configures and [New] checks.
package redisstore
